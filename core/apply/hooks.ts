import type { Plan } from '../plan/types.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import type { ApplyOptions } from './options.js';
import type { Slicer } from './slicer.js';

/**
 * Work that must happen with every applied plan, registered once instead of wrapping the applier
 * (docs/architecture.md "The write path"). `inTransaction` and `afterSwap` are
 * synchronous; `prepare` and `inTransactionSliced` (large applies only) may yield.
 */
export interface ApplyHook {
  /**
   * Runs inside the SQLite transaction that writes the plan, after its rows and revision record.
   * A throw rolls the whole transaction back and `applyPlan` fails with STORE_FAILED. Also runs
   * for an empty plan (which writes no rows), so a hook decides itself whether empty plans matter.
   * `next` is the snapshot the plan makes (not yet current) and `prev` the current one: what a
   * hook records in proportion to the plan (the DNS IXFR journal) reads both.
   */
  inTransaction?(plan: Plan, opts: ApplyOptions, next: Snapshot, prev: Snapshot): void;
  /**
   * In a large plan applied in slices only: runs inside its transaction, after the rows and the
   * revision record and before `inTransaction`, and may yield through `slicer` (the transaction
   * stays open; the write gate keeps other plans out). For writes in proportion to the plan (the
   * config-sync outbox row). A throw rolls the transaction back, as `inTransaction`'s does.
   */
  inTransactionSliced?(plan: Plan, opts: ApplyOptions, slicer: Slicer): Promise<void>;
  /**
   * Runs after the snapshot swap, before events are emitted; only for plans with changes. The plan
   * is committed by then, so a throw does not fail the apply: it goes to the registry's `onError`.
   */
  afterSwap?(plan: Plan, next: Snapshot, prev: Snapshot, opts: ApplyOptions): void;
  /**
   * Runs before the transaction of a large plan applied in slices (apply-sliced.ts), once its next
   * snapshot is built: work that costs in proportion to the plan and can be done ahead, off to the
   * side, yielding to the event loop through `slicer` (the DNS zone index). Returns what to run at
   * the swap, in the same turn (to install what it built), or nothing. A throw fails the apply
   * before anything is written. The synchronous `applyPlan` does not call it.
   */
  prepare?(plan: Plan, next: Snapshot, prev: Snapshot, slicer: Slicer, opts: ApplyOptions): Promise<(() => void) | void>;
}

/** The hooks every `applyPlan` of one core runs, in registration order. */
export class ApplyHooks {
  private readonly list: ApplyHook[] = [];
  constructor(private readonly onError: (err: unknown) => void = () => {}) {}

  /** Registers a hook; the returned function removes it again. */
  add(hook: ApplyHook): () => void {
    this.list.push(hook);
    return () => {
      const i = this.list.indexOf(hook);
      if (i >= 0) this.list.splice(i, 1);
    };
  }

  /** Runs every `inTransaction` hook; the caller holds the transaction. */
  runInTransaction(plan: Plan, opts: ApplyOptions, next: Snapshot, prev: Snapshot): void {
    for (const h of [...this.list]) h.inTransaction?.(plan, opts, next, prev);
  }

  /** Runs every `inTransactionSliced` hook in turn; the caller holds the transaction. */
  async runInTransactionSliced(plan: Plan, opts: ApplyOptions, slicer: Slicer): Promise<void> {
    for (const h of [...this.list]) await h.inTransactionSliced?.(plan, opts, slicer);
  }

  /** Runs every `prepare` hook in turn; resolves with what each wants run at the swap. */
  async runPrepare(plan: Plan, next: Snapshot, prev: Snapshot, slicer: Slicer, opts: ApplyOptions): Promise<(() => void)[]> {
    const installs: (() => void)[] = [];
    for (const h of [...this.list]) {
      const install = await h.prepare?.(plan, next, prev, slicer, opts);
      // run at the swap, when the plan is committed: a throw is reported like afterSwap's
      if (install) installs.push(() => { try { install(); } catch (err) { this.onError(err); } });
    }
    return installs;
  }

  /** Runs every `afterSwap` hook; a throw is reported to `onError` and the next hook still runs. */
  runAfterSwap(plan: Plan, next: Snapshot, prev: Snapshot, opts: ApplyOptions): void {
    for (const h of [...this.list]) {
      try {
        h.afterSwap?.(plan, next, prev, opts);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
