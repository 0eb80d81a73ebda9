import type { Reconciler } from '../reconcile.js';
import { holdsNow } from '../../runtime/cluster/port.js';
import { GslbError } from '../../runtime/errors.js';
import { ReconcileError } from '../errors.js';
import type { Plan } from '../../core/plan/types.js';
import { loadStep } from '../reconcile/load.js';
import { planStep } from '../reconcile/plan.js';
import type { Trace } from '../reconcile/run.js';
import { validateStep } from '../reconcile/validate.js';
import { rolledBackMessage, reportRollback } from './report.js';
import type { PendingRollback } from './state.js';

/** A conflict that planning again resolves: the snapshot moved on (409) or kept moving while the worker planned. */
const isConflict = (err: unknown) => (err instanceof GslbError && err.code === 'API_CONFLICT')
  || (err instanceof ReconcileError && err.reason === 'ApplyConflict');

/** A rollback that was applied: the good revision `sha` re-applied in place of `from`. */
export interface RolledBack {
  result: 'rolledback';
  /** the revision re-applied */
  sha: string;
  /** the revision that breached, now pinned out */
  from: string;
  reason: string;
  signer: string | null;
  plan: Plan;
}

/**
 * The rollback step (docs/gitops.md "Automatic rollback"), run by the loop before the usual steps
 * when the guard has a pending rollback: re-applies the last good revision through the reconcile's
 * load, validate and plan steps and `core.applySliced`, with force (a rollback is not held back by the safety thresholds, the traffic budget or the routing
 * tests) and meta trigger `rollback`; the bad revision is pinned out. Returns the rollback, or
 * undefined when there is none to run, it no longer applies (not the git leader any more, or another
 * revision applied since: dropped), it met a conflict (kept pending: planned again on the next
 * pass), or it failed (recorded, logged and alerted as RollbackFailed; the bad revision stays
 * applied). The usual steps then run.
 */
export async function rollbackStep(r: Reconciler, trace: Trace): Promise<RolledBack | undefined> {
  const guard = r.rollback;
  const p: PendingRollback | null = guard.state.pending;
  if (!p) return undefined;
  if (!(await holdsNow(r.core.ports.gitLeader))) { guard.drop(p, 'another node holds the git lease'); return undefined; }
  if (r.store.lastApplied() !== p.from) { guard.drop(p, `${p.from.slice(0, 12)} is no longer the applied revision`); return undefined; }
  trace.sha = p.to;
  trace.log = trace.log.child({ revision: p.to, rollbackFrom: p.from });
  let plan: Plan;
  let signer: string | null;
  try {
    // The revision's manifests read from the local clone and planned as a reconcile does them (in
    // the offload worker when there is one), then applied in slices under the write gate: a
    // rollback of a large repo keeps DNS answering. The signature is not verified again: the
    // commit was verified when it was first applied.
    const { desired } = await validateStep(r, p.to, undefined, await loadStep(r, p.to));
    plan = (await planStep(r, p.to, desired)).plan;
    trace.plan = plan;
    // the commit's own facts as recorded when it was first applied; the plan id is this plan's
    const { planId: _old, ...recorded } = r.store.revisionMeta(p.to) ?? {};
    signer = typeof recorded.signer === 'string' ? recorded.signer : null;
    const meta = {
      ...recorded, sha: p.to, trigger: 'rollback', forced: !plan.safety.safe, drift: false,
      rolledBackFrom: p.from, rollbackReason: p.reason, branch: r.core.config.gitops.branch,
    };
    await r.core.applySliced(plan, { force: true, meta, recordEmpty: true, held: r.gateHold });
  } catch (err) {
    if (isConflict(err)) {
      // the state moved on between the plan and the apply (a REST write): planned again on the next pass
      trace.log.warn({ err, breach: p.reason }, 'rollback deferred: the state changed while it was planned');
      return undefined;
    }
    const message = `rollback of ${p.from.slice(0, 12)} to ${p.to.slice(0, 12)} failed; the revision stays applied: ${(err as Error).message}`;
    trace.log.error({ err, breach: p.reason }, 'rollback failed');
    const rec = guard.failed(p, message, r.now());
    reportRollback(r.core, r.metrics, rec);
    return undefined;
  }
  guard.rolledBack(p, rolledBackMessage(p.from, p.to, p.reason), r.now());
  return { result: 'rolledback', sha: p.to, from: p.from, reason: p.reason, signer, plan };
}
