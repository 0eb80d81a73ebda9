import type { Plan } from '../plan/types.js';
import { nextSnapshot, type RowMutation, type Snapshot } from '../snapshot/snapshot.js';
import type { ResourceStore } from '../store/resources.js';
import type { EventBus } from '../events/bus.js';
import { GslbError, conflict } from '../../runtime/errors.js';
import { planEvents } from './events.js';
import type { ApplyHooks } from './hooks.js';
import type { WriteGate } from './gate.js';
import { NO_PROVENANCE, nextProvenance, type Provenance } from './provenance.js';
import { planId } from '../plan/plan-id.js';

/**
 * Holds the current Snapshot and the provenance of what it serves. Readers take `current` once per
 * request or query and keep it. `provenance` moves with every recorded revision, also an empty
 * git commit that swaps no snapshot.
 */
export class SnapshotHolder {
  /**
   * `seq` of the newest revision that changed rows, i.e. the committed state `current` was built
   * from (core/store/resources.ts `rowsSeqOf`); moves with every swap. Lets a plan computed
   * off-thread from the database name the state it saw (gitops/offload/).
   */
  rowsSeq = 0;
  constructor(public current: Snapshot, public provenance: Provenance = NO_PROVENANCE) {}
}

export interface ApplyContext {
  store: ResourceStore;
  holder: SnapshotHolder;
  bus: EventBus;
  /** work registered once for every apply (e.g. the cluster outbox); none when absent */
  hooks?: ApplyHooks;
  /** held while a large plan is written in slices (apply-sliced.ts); `applyPlan` refuses to run then */
  gate?: WriteGate;
  now?: () => number;
}

export type { ApplyOptions } from './options.js';
import type { ApplyOptions } from './options.js';

/**
 * Refuses a plan that may not be applied on `prev`: 409 when it was computed against another
 * snapshot (not for an empty plan that is only recorded: it changes no row), CTRL_STALLED when it
 * is unsafe and not forced.
 */
export function checkApplicable(prev: Snapshot, plan: Plan, opts: ApplyOptions): void {
  const empty = plan.changes.length === 0;
  if (plan.baseVersion !== prev.version && !(empty && opts.recordEmpty)) {
    throw conflict(`plan ${plan.revision} was computed against snapshot ${plan.baseVersion}, current is ${prev.version}; plan again`);
  }
  if (!plan.safety.safe && !opts.force) {
    throw new GslbError('CTRL_STALLED', plan.safety.message ?? 'plan is unsafe', { extra: { reason: plan.safety.reason } });
  }
}

/** The meta recorded with a revision: `opts.meta` plus the plan id (the given one, the plan's own, or computed). */
export function revisionMeta(plan: Plan, opts: ApplyOptions): Record<string, unknown> {
  const given = typeof opts.meta?.planId === 'string' ? opts.meta.planId : plan.id;
  return { ...opts.meta, planId: given ?? planId(plan) };
}

/** The row mutation of one plan change. */
export const changeMutation = (c: Plan['changes'][number]): RowMutation => (c.op === 'delete' ? { op: 'delete', kind: c.kind, id: c.id } : { op: 'put', row: c.after! });

/** Converts plan changes to row mutations. */
export function planMutations(plan: Plan): RowMutation[] {
  return plan.changes.map(changeMutation);
}

/**
 * The one write path (DESIGN decision 1). Builds the next Snapshot off to the side, then in one
 * turn of the event loop commits the SQLite transaction and swaps the snapshot reference. A failed
 * commit discards the new snapshot and leaves everything as it was. Events are emitted after the
 * swap. The transaction holds, in order: `opts.inTransaction`, the plan's rows and revision record
 * (for an empty plan only with `recordEmpty`), and every hook's `inTransaction`; `afterSwap` hooks
 * run after the swap. An empty plan swaps nothing and emits nothing, and returns the current
 * snapshot. Errors: 409 when the plan was computed against an older snapshot (not for an empty plan
 * that is recorded: it changes no row); CTRL_STALLED when the plan is unsafe and not forced;
 * STORE_FAILED when the transaction (a hook included) fails.
 */
export function applyPlan(ctx: ApplyContext, plan: Plan, opts: ApplyOptions = {}): Snapshot {
  if (ctx.gate?.busy && !ctx.gate.heldBy(opts.held)) throw conflict(`a large plan is being applied; ${plan.revision} was not applied: retry`);
  const prev = ctx.holder.current;
  const empty = plan.changes.length === 0;
  checkApplicable(prev, plan, opts);
  const now = (ctx.now ?? Date.now)();
  const next = empty ? prev : nextSnapshot(prev, planMutations(plan), plan.revision, now);
  const recorded = !empty || Boolean(opts.recordEmpty);
  const meta = recorded ? revisionMeta(plan, opts) : {};
  let seq = 0;
  try {
    ctx.store.transaction(() => {
      opts.inTransaction?.();
      if (recorded) seq = ctx.store.writePlan(plan, now, meta);
      ctx.hooks?.runInTransaction(plan, opts, next, prev);
    });
  } catch (err) {
    throw new GslbError('STORE_FAILED', `applying ${plan.revision} failed; nothing changed: ${(err as Error).message}`, { cause: err });
  }
  if (recorded) ctx.holder.provenance = nextProvenance(ctx.holder.provenance, plan, now, meta);
  if (empty) return prev;
  ctx.holder.current = next;
  ctx.holder.rowsSeq = seq;
  ctx.hooks?.runAfterSwap(plan, next, prev, opts);
  ctx.bus.emit('plan_applied', { plan, snapshot: next, previous: prev });
  for (const msg of planEvents(plan)) ctx.bus.emit('ws_message', msg);
  return next;
}
