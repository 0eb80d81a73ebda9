import type { Plan } from '../plan/types.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { GslbError, conflict } from '../../runtime/errors.js';
import { applyPlan, checkApplicable, revisionMeta, type ApplyContext, type ApplyOptions } from './apply.js';
import { changeEvent } from './events.js';
import type { WriteGate } from './gate.js';
import { nextProvenance } from './provenance.js';
import { Slicer, runSliced } from './slicer.js';
import { proposedSnapshotSteps } from './proposed.js';

/**
 * Plans with fewer changes than this are applied in one turn (`applyPlan`). Every plan with
 * changes is sliced: what a swap rebuilds (the DNS zone index) costs in proportion to the whole
 * state, not to the plan, so a one-row change of a 100,000-service state is as long a block as
 * a large plan; slicing a small plan of a small state only adds a few turns.
 */
export const SLICED_MIN_CHANGES = 1;

/** What a sliced apply needs beyond `applyPlan`'s context. */
export interface SlicedApplyContext extends ApplyContext {
  gate: WriteGate;
  /**
   * A WAL checkpoint on another connection (the offload worker's), run after a large commit; the
   * main connection's automatic checkpoint stays off until it settles. Without it the main
   * connection checkpoints as usual, at its next commit.
   */
  checkpoint?: (() => Promise<void>) | undefined;
  /** main-thread time per slice, ms (default 10) */
  budgetMs?: number;
  /** rows below which the plan is applied in one turn (default SLICED_MIN_CHANGES) */
  minChanges?: number;
}

/**
 * The one write path for a large plan (docs/architecture.md "Large applies"): the same result,
 * refusals and order of effects as `applyPlan`, with the work cut into slices of about `budgetMs`
 * between which the event loop answers DNS queries and requests. Holds the write gate from start
 * to end, so no other plan is applied meanwhile (REST writes wait for it, a synchronous
 * `applyPlan` is refused with 409). In order:
 *
 * 1. the next Snapshot is built off to the side from the current one plus the plan (slices);
 * 2. `prepare` hooks build what depends on it ahead (the DNS zone index; slices);
 * 3. one SQLite transaction, open across the slices that write the rows, then (once the plan's
 *    id is there, when it was still being computed: `opts.idReady`) the revision record, every
 *    hook's `inTransactionSliced` (slices) and `inTransaction`, and the commit;
 * 4. in the same turn as the commit: the snapshot swap, what `prepare` hooks built goes live,
 *    `afterSwap` hooks, the `plan_applied` event;
 * 5. the WebSocket messages of the changes (slices), then the gate is released.
 *
 * A plan below `minChanges` rows goes through `applyPlan` in one turn (after waiting for the
 * gate). Errors: as `applyPlan` (409, CTRL_STALLED, STORE_FAILED); a failure before the commit
 * rolls back and leaves everything as it was.
 */
export async function applyPlanSliced(ctx: SlicedApplyContext, plan: Plan, opts: ApplyOptions = {}): Promise<Snapshot> {
  const own = ctx.gate.heldBy(opts.held);
  if (plan.changes.length < (ctx.minChanges ?? SLICED_MIN_CHANGES)) {
    if (!own) await ctx.gate.idle();
    await opts.idReady;
    return applyPlan(ctx, plan, opts);
  }
  const hold = own ? undefined : await ctx.gate.acquire();
  try {
    return await applyHeld(ctx, plan, opts);
  } finally {
    hold?.release();
  }
}

/** The sliced apply proper; the caller holds the gate. */
async function applyHeld(ctx: SlicedApplyContext, plan: Plan, opts: ApplyOptions): Promise<Snapshot> {
  const prev = ctx.holder.current;
  checkApplicable(prev, plan, opts);
  const slicer = new Slicer(ctx.budgetMs ?? 10);
  const changes = plan.changes;
  const now = (ctx.now ?? Date.now)();
  const next = await runSliced(proposedSnapshotSteps(prev, plan, now), slicer);
  const installs = (await ctx.hooks?.runPrepare(plan, next, prev, slicer, opts)) ?? [];
  await slicer.maybePause();
  // the gate keeps every other plan out; a swap by anything else would be a bug, not a race
  const unchanged = () => { if (ctx.holder.current !== prev) throw conflict(`the snapshot moved on while ${plan.revision} was being applied; plan again`); };
  const tx = ctx.store.begin();
  let seq: number;
  let meta: Record<string, unknown>;
  try {
    opts.inTransaction?.();
    for (let i = 0; i < changes.length;) {
      const to = Math.min(changes.length, i + 64);
      ctx.store.writeChanges(changes, i, to, now, opts.rowJson);
      i = to;
      if (slicer.due()) { await slicer.pause(); unchanged(); }
    }
    // a plan made off-thread: its id was hashed meanwhile; the revision records it
    if (opts.idReady) { await opts.idReady; unchanged(); }
    meta = revisionMeta(plan, opts);
    seq = ctx.store.writeRevision(plan, now, meta);
    if (ctx.hooks) { await ctx.hooks.runInTransactionSliced(plan, opts, slicer); unchanged(); }
    ctx.hooks?.runInTransaction(plan, opts, next, prev);
    tx.commit(Boolean(ctx.checkpoint));
  } catch (err) {
    tx.rollback();
    if (err instanceof GslbError && err.code === 'API_CONFLICT') throw err;
    throw new GslbError('STORE_FAILED', `applying ${plan.revision} failed; nothing changed: ${(err as Error).message}`, { cause: err });
  }
  // committed: from here to the events, one turn
  ctx.holder.provenance = nextProvenance(ctx.holder.provenance, plan, now, meta);
  ctx.holder.current = next;
  ctx.holder.rowsSeq = seq;
  for (const install of installs) install();
  ctx.hooks?.runAfterSwap(plan, next, prev, opts);
  ctx.bus.emit('plan_applied', { plan, snapshot: next, previous: prev });
  if (ctx.checkpoint) {
    const resume = () => { ctx.store.resumeCheckpoints(); };
    ctx.checkpoint().then(resume, resume);
  }
  await slicer.pause();
  for (let i = 0; i < changes.length; i++) {
    const msg = changeEvent(changes[i]!);
    if (msg) ctx.bus.emit('ws_message', msg);
    if ((i & 63) === 63) await slicer.maybePause();
  }
  return next;
}
