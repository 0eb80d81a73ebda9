import { holdsNow } from '../../runtime/cluster/port.js';
import { GslbError } from '../../runtime/errors.js';
import type { Logger } from '../../runtime/log/logger.js';
import { ReconcileError } from '../errors.js';
import type { Plan } from '../../core/plan/types.js';
import type { LoadedCommit, ReconcileDeps, RolledBack } from '../reconcile/context.js';
import type { RunHold } from '../reconcile/hold.js';
import { loadStep, rememberedRows, type LoadDeps } from '../reconcile/load.js';
import { planStep, type PlanDeps } from '../reconcile/plan.js';
import { checkActualStep, validateStep, type ValidateDeps } from '../reconcile/validate.js';
import { rolledBackMessage, reportRollback } from './report.js';
import type { PendingRollback } from './state.js';

/** A conflict that planning again resolves: the snapshot moved on (409) or kept moving while the worker planned. */
const isConflict = (err: unknown) => (err instanceof GslbError && err.code === 'API_CONFLICT')
  || (err instanceof ReconcileError && err.reason === 'ApplyConflict');

export type { RolledBack } from '../reconcile/context.js';

/** What the rollback step needs: what the load, validate and plan steps need, and the git lease, the apply, the clock and the guard. */
export type RollbackDeps = LoadDeps & ValidateDeps & PlanDeps & Pick<ReconcileDeps, 'metrics' | 'now' | 'rollback' | 'keyring'> & {
  core: Pick<ReconcileDeps['core'], 'ports' | 'config' | 'env' | 'holder' | 'newId' | 'log' | 'applySliced' | 'bus'>;
  store: Pick<ReconcileDeps['store'], 'lastApplied' | 'revisionMeta'>;
};

/**
 * A pending rollback that was tried: its revision, the logger that names it, the plan once made,
 * and the rollback when it was applied (else it was deferred or failed, and the usual steps run).
 */
export interface RollbackTried { sha: string; log: Logger; plan: Plan | undefined; rolledBack: RolledBack | undefined }

/**
 * The rollback step (docs/gitops.md "Automatic rollback"), run by the loop before the usual steps
 * when the guard has a pending rollback: re-applies the last good revision through the reconcile's
 * load, validate and plan steps and `core.applySliced` (under the reconcile's write gate, `hold`), with force (a rollback is not held back by the safety thresholds, the traffic budget or the routing
 * tests) and meta trigger `rollback`; the bad revision is pinned out. `loaded`: the commit the
 * Reconciler remembers (its rows are not read again). Returns undefined when there is none to run
 * or it no longer applies (not the git leader any more, or another revision applied since:
 * dropped); else what was tried, with the rollback unless it met a conflict (kept pending: planned
 * again on the next pass) or failed (recorded, logged and alerted as RollbackFailed; the bad
 * revision stays applied). Unless it was applied, the usual steps then run.
 */
export async function rollbackStep(r: RollbackDeps, hold: RunHold, loaded: LoadedCommit | undefined, log: Logger): Promise<RollbackTried | undefined> {
  const guard = r.rollback;
  const p: PendingRollback | null = guard.state.pending;
  if (!p) return undefined;
  if (!(await holdsNow(r.core.ports.gitLeader))) { guard.drop(p, 'another node holds the git lease'); return undefined; }
  if (r.store.lastApplied() !== p.from) { guard.drop(p, `${p.from.slice(0, 12)} is no longer the applied revision`); return undefined; }
  const tried: RollbackTried = { sha: p.to, log: log.child({ revision: p.to, rollbackFrom: p.from }), plan: undefined, rolledBack: undefined };
  let plan: Plan;
  let signer: string | null;
  try {
    // The revision's manifests read from the local clone and planned as a reconcile does them (in
    // the offload worker when there is one), then applied in slices under the write gate: a
    // rollback of a large repo keeps DNS answering. The signature is not verified again: the
    // commit was verified when it was first applied.
    const v = await validateStep(r, await loadStep(r, p.to, rememberedRows(loaded, p.to, r.keyring.stamp())));
    checkActualStep(r, v);
    plan = (await planStep(r, hold, p.to, v.desired)).plan;
    tried.plan = plan;
    // the commit's own facts as recorded when it was first applied; the plan id is this plan's
    const { planId: _old, ...recorded } = r.store.revisionMeta(p.to) ?? {};
    signer = typeof recorded.signer === 'string' ? recorded.signer : null;
    const meta = {
      ...recorded, sha: p.to, trigger: 'rollback', forced: !plan.safety.safe, drift: false,
      rolledBackFrom: p.from, rollbackReason: p.reason, branch: r.core.config.gitops.branch,
    };
    await r.core.applySliced(plan, { force: true, meta, recordEmpty: true, held: hold.held });
  } catch (err) {
    if (isConflict(err)) {
      // the state moved on between the plan and the apply (a REST write): planned again on the next pass
      tried.log.warn({ err, breach: p.reason }, 'rollback deferred: the state changed while it was planned');
      return tried;
    }
    const message = `rollback of ${p.from.slice(0, 12)} to ${p.to.slice(0, 12)} failed; the revision stays applied: ${(err as Error).message}`;
    tried.log.error({ err, breach: p.reason }, 'rollback failed');
    const rec = guard.failed(p, message, r.now());
    reportRollback(r.core, r.metrics, rec);
    return tried;
  }
  guard.rolledBack(p, rolledBackMessage(p.from, p.to, p.reason), r.now());
  return { ...tried, rolledBack: { result: 'rolledback', sha: p.to, from: p.from, reason: p.reason, signer, plan } };
}
