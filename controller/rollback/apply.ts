import type { Reconciler } from '../reconcile.js';
import { DEFAULT_TENANT } from '../../runtime/model/types.js';
import { readManifestFiles } from '../source/git-source.js';
import { loadManifests } from '../load/index.js';
import { parseCacheKey } from '../load/manifest.js';
import { checkAgainstActual, sortProblems, validateManifests } from '../validate/validate.js';
import { validationEnv } from '../validate/names.js';
import { planChanges } from '../plan/plan.js';
import type { DesiredRow, Plan } from '../plan/types.js';
import type { Trace } from '../reconcile/run.js';
import { rolledBackMessage, reportRollback } from './report.js';
import type { PendingRollback } from './state.js';

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
 * The desired rows of commit `sha` read from the local clone: every manifest under pathPrefix,
 * validated as the validate step does, and checked against the actual rows. The signature is not
 * verified again: the commit was verified when it was first applied. Errors: whatever reading the
 * tree throws; an Error listing the problems when the manifests do not validate now.
 */
async function desiredAt(r: Reconciler, sha: string): Promise<DesiredRow[]> {
  const g = r.core.config.gitops;
  const files = await readManifestFiles(r.source.gitdir, sha, g.pathPrefix, (p, oid) => r.parseCache.has(parseCacheKey(p, oid)));
  const { manifests, problems } = loadManifests(files, r.parseCache);
  const env = validationEnv(r.core.config, r.core.env);
  const out = validateManifests(manifests, env);
  const all = sortProblems([...problems, ...out.problems]);
  if (all.length === 0) all.push(...checkAgainstActual(out.desired, r.core.holder.current, env));
  if (all.length) throw new Error(`the manifests of ${sha.slice(0, 12)} do not validate now: ${all[0]}${all.length > 1 ? ` (and ${all.length - 1} more)` : ''}`);
  return out.desired;
}

/**
 * The rollback step (docs/gitops.md "Automatic rollback"), run by the loop before the usual steps
 * when the guard has a pending rollback: re-applies the last good revision through `core.apply` with
 * force (a rollback is not held back by the safety thresholds, the traffic budget or the routing
 * tests) and meta trigger `rollback`; the bad revision is pinned out. Returns the rollback, or
 * undefined when there is none to run, it no longer applies (not the git leader any more, or another
 * revision applied since: dropped), or it failed (recorded, logged and alerted as RollbackFailed;
 * the bad revision stays applied). The usual steps then run.
 */
export async function rollbackStep(r: Reconciler, trace: Trace): Promise<RolledBack | undefined> {
  const guard = r.rollback;
  const p: PendingRollback | null = guard.state.pending;
  if (!p) return undefined;
  const leader = r.core.ports.gitLeader;
  if (leader && !leader.holds()) { guard.drop(p, 'another node holds the git lease'); return undefined; }
  if (r.store.lastApplied() !== p.from) { guard.drop(p, `${p.from.slice(0, 12)} is no longer the applied revision`); return undefined; }
  trace.sha = p.to;
  trace.log = trace.log.child({ revision: p.to, rollbackFrom: p.from });
  let plan: Plan;
  let signer: string | null;
  try {
    const desired = await desiredAt(r, p.to);
    plan = planChanges({
      desired, actual: r.core.holder.current, revision: p.to, newId: () => r.core.newId(),
      tenantId: DEFAULT_TENANT, safety: r.core.config.gitops.safety,
    });
    trace.plan = plan;
    // the commit's own facts as recorded when it was first applied; the plan id is this plan's
    const { planId: _old, ...recorded } = r.store.revisionMeta(p.to) ?? {};
    signer = typeof recorded.signer === 'string' ? recorded.signer : null;
    const meta = {
      ...recorded, sha: p.to, trigger: 'rollback', forced: !plan.safety.safe, drift: false,
      rolledBackFrom: p.from, rollbackReason: p.reason, branch: r.core.config.gitops.branch,
    };
    // planned and applied in one turn of the event loop: nothing can move the snapshot in between
    r.core.apply(plan, { force: true, meta, recordEmpty: true });
  } catch (err) {
    const message = `rollback of ${p.from.slice(0, 12)} to ${p.to.slice(0, 12)} failed; the revision stays applied: ${(err as Error).message}`;
    trace.log.error({ err, breach: p.reason }, 'rollback failed');
    const rec = guard.failed(p, message, r.now());
    reportRollback(r.core, r.metrics, rec);
    return undefined;
  }
  guard.rolledBack(p, rolledBackMessage(p.from, p.to, p.reason), r.now());
  return { result: 'rolledback', sha: p.to, from: p.from, reason: p.reason, signer, plan };
}
