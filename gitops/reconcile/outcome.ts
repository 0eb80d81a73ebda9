import type { ReconcileError } from '../errors.js';
import { recordFailure, recordSuccess, type GitOpsStatus } from '../status.js';
import { renderPlanText } from '../../core/plan/render.js';
import type { Finished, Outcome, ReconcileDeps, ReconcileRequest, Refusal, RolledBack, Trace } from './context.js';
import { pinnedOutError, reportRollback } from '../rollback/report.js';

/** What the outcome recorder needs: the bus, the store (status, attempts), the metrics, the clock and the rollback guard's record. */
export type OutcomeDeps = Pick<ReconcileDeps, 'store' | 'metrics' | 'now'> & {
  core: Pick<ReconcileDeps['core'], 'bus'>;
  rollback: Pick<ReconcileDeps['rollback'], 'pinned' | 'state'>;
};

/**
 * The refusal that stands after an outcome: a stalled head is remembered (with `stamp`, what the
 * refusal depends on besides the head) so it is not re-checked and re-announced every poll; a
 * reconcile that ran to its end (the state moved on) forgets it; anything else keeps `before`.
 */
export function nextRefusal(before: Refusal | undefined, outcome: Outcome, sha: string | undefined, stamp: string): Refusal | undefined {
  if (outcome.result === 'failed') return outcome.error.errorClass === 'stalled' && sha ? { sha, stamp, error: outcome.error } : before;
  if (outcome.result === 'skipped') return before;
  return undefined;
}

/**
 * The final step of every reconcile: the status `s` (updated in place: it is what the controller
 * reports), persisted status, events, the one summary log line, and metrics, for success and
 * failure alike. Saving the status is best effort (logged); other errors propagate to the caller,
 * which logs them.
 */
export function recordOutcome(r: OutcomeDeps, s: GitOpsStatus, req: ReconcileRequest, trace: Trace, outcome: Outcome, started: number): void {
  const now = r.now();
  s.lastAttemptAt = now;
  r.metrics.reconcileSeconds.observe((now - started) / 1000);
  if (outcome.result === 'skipped') {
    // still stalled on the same head: not re-announced, but the status shows the poll happened
    // (failures, lastAttemptAt and lastError advance; failingSince stays)
    const e = outcome.refused;
    s.ready = false; s.reason = e.reason; s.message = e.message; s.errorClass = e.errorClass; s.problems = e.problems;
    recordFailure(s, now, e);
    trace.log.debug({ sha: outcome.sha, reason: e.reason }, 'reconcile skipped: head was already refused');
  } else if (outcome.result === 'failed') {
    recordFailed(r, s, req, trace, outcome.error, now, started);
  } else if (outcome.result === 'rolledback') {
    recordRolledBack(r, s, trace, outcome, now, started);
  } else {
    recordFinished(r, s, req, trace, outcome, now, started);
  }
  try { r.store.saveStatus(s); } catch (err) { trace.log.error({ err }, 'saving gitops status failed'); }
}

/** Reasons that hold a valid plan back until it is forced (safety thresholds). */
const HELD_REASONS: ReadonlySet<string> = new Set(['TooManyDeletes', 'TooManyUpdates', 'TooMuchTrafficChanged']);

const countsOf = (trace: Trace) => trace.plan?.counts ?? { create: 0, update: 0, delete: 0 };

/** A failed reconcile: not ready; a stalled head is remembered, recorded, announced and counted. */
function recordFailed(r: OutcomeDeps, s: GitOpsStatus, req: ReconcileRequest, trace: Trace, error: ReconcileError, now: number, started: number): void {
  s.ready = false; s.reason = error.reason; s.message = error.message; s.errorClass = error.errorClass; s.problems = error.problems;
  recordFailure(s, now, error);
  r.metrics.ready.set(0);
  const sha = trace.sha;
  const held = HELD_REASONS.has(error.reason);
  // the dashboard and `gslbctl status` show what a forced reconcile would apply
  s.pendingPlan = held && sha && trace.plan ? { revision: sha, reason: error.reason, counts: trace.plan.counts, text: renderPlanText(trace.plan) } : null;
  if (error.errorClass === 'stalled' && sha) {
    if (held) r.metrics.apply.inc({ result: 'held' });
    else if (error.reason === 'ManifestsInvalid') r.metrics.apply.inc({ result: 'invalid' });
    r.metrics.rejected.inc({ reason: error.reason });
    r.store.recordAttempt({ sha, at: now, reason: error.reason, class: error.errorClass, message: error.message, problems: error.problems, trigger: req.trigger.kind });
    const payload = { revision: sha, reason: error.reason, message: error.message };
    r.core.bus.emit('gitops_rejected', payload);
    r.core.bus.emit('ws_message', { type: 'gitops_rejected', payload: { ...payload, problems: error.problems } });
  } else if (error.reason === 'ApplyFailed' || error.reason === 'ApplyConflict') {
    r.metrics.apply.inc({ result: 'failure' });
  }
  trace.log.warn({
    result: 'failed', reason: error.reason, errorClass: error.errorClass, sha, problems: error.problems.length ? error.problems : undefined,
    err: error.cause ?? undefined, ms: now - started, steps: trace.timings, ...countsOf(trace),
  }, `reconcile failed: ${error.reason}`);
}

/** A reconcile that ran to its end: ready; an applied or recorded commit moves the last-applied fields. */
function recordFinished(r: OutcomeDeps, s: GitOpsStatus, req: ReconcileRequest, trace: Trace, done: Finished, now: number, started: number): void {
  const { plan, sha, signer, drift } = done;
  const counts = plan.counts;
  s.ready = true; s.reason = 'Succeeded'; s.errorClass = null; s.problems = []; s.pendingPlan = null;
  recordSuccess(s, now);
  s.message = done.result === 'unchanged' ? `revision ${sha.slice(0, 12)} is applied; no drift`
    : drift ? `revision ${sha.slice(0, 12)}: corrected drift in ${plan.changes.length} resource(s)`
      : `applied revision ${sha.slice(0, 12)} (creates=${counts.create} updates=${counts.update} deletes=${counts.delete})`;
  s.drift = drift ? plan.changes.map((c) => c.label) : [];
  if (done.result !== 'unchanged') {
    s.lastAppliedRevision = sha; s.lastAppliedAt = now; s.lastSigner = signer?.fingerprint ?? null;
    if (plan.changes.length) s.lastPlan = counts;
    r.metrics.apply.inc({ result: done.result === 'noop' ? 'noop' : 'success' });
    r.metrics.lastApplyInfo.reset();
    r.metrics.lastApplyInfo.set({ sha, signer: signer?.fingerprint ?? '' }, 1);
  }
  if (drift) {
    r.metrics.drift.inc(plan.changes.length);
    trace.log.warn({ drift: s.drift }, 'drift detected on git-owned resources; corrected');
  }
  r.metrics.ready.set(1);
  // an unchanged head is every quiet poll: debug, so info shows what changed (docs/logging.md)
  trace.log[done.result === 'unchanged' ? 'debug' : 'info']({ result: done.result, sha, signer: signer?.fingerprint, ms: now - started, steps: trace.timings, ...counts, forced: Boolean(req.force) || undefined },
    `reconcile ${done.result}: plan creates=${counts.create} updates=${counts.update} deletes=${counts.delete}`);
}

/**
 * A rollback that was applied: the good revision is what serves (last applied, provenance, info
 * metric), and the controller is stalled on the pinned-out head (RolledBack) until a newer commit.
 * Recorded in the refused attempts under the bad revision, announced (`gitops_rollback` event,
 * alert and WebSocket message), counted, and logged once at info.
 */
function recordRolledBack(r: OutcomeDeps, s: GitOpsStatus, trace: Trace, done: RolledBack, now: number, started: number): void {
  const { plan, sha, from, signer } = done;
  const counts = plan.counts;
  const pin = pinnedOutError(r.rollback.pinned(from) ?? { revision: from, rolledBackTo: sha, reason: done.reason, at: now });
  s.ready = false; s.reason = pin.reason; s.message = pin.message; s.errorClass = pin.errorClass; s.problems = pin.problems;
  s.pendingPlan = null; s.drift = [];
  recordFailure(s, now, pin);
  s.lastAppliedRevision = sha; s.lastAppliedAt = now; s.lastSigner = signer;
  if (plan.changes.length) s.lastPlan = counts;
  r.metrics.ready.set(0);
  r.metrics.lastApplyInfo.reset();
  r.metrics.lastApplyInfo.set({ sha, signer: signer ?? '' }, 1);
  r.store.recordAttempt({ sha: from, at: now, reason: pin.reason, class: pin.errorClass, message: pin.message, problems: pin.problems, trigger: 'rollback' });
  const rec = r.rollback.state.lastRollback;
  if (rec) reportRollback(r.core, r.metrics, rec, counts);
  trace.log.info({ result: 'rolledback', from, to: sha, breach: done.reason, ms: now - started, steps: trace.timings, ...counts }, 'rollback applied');
}
