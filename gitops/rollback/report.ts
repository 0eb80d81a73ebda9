import type { Core } from '../../runtime/app.js';
import { stalled, type ReconcileError } from '../errors.js';
import type { GitOpsMetrics } from '../metrics.js';
import type { PinnedOut, RollbackRecord, RollbackResult } from './state.js';

const METRIC_RESULT: Record<RollbackResult, string> = { RolledBack: 'success', NoGoodRevision: 'none', RollbackFailed: 'failure' };

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Announces the outcome of a breach: `gslbd_gitops_rollbacks_total{result}`, the bus event
 * `gitops_rollback` (alerts: the file's targets and alert-target rows subscribed to `rollback`) and
 * the WebSocket message of the same name. `counts` are those of the rollback plan (zero when nothing
 * was re-applied).
 */
export function reportRollback(core: Pick<Core, 'bus'>, metrics: GitOpsMetrics, rec: RollbackRecord, counts = { create: 0, update: 0, delete: 0 }): void {
  metrics.rollbacks.inc({ result: METRIC_RESULT[rec.result] });
  const payload = {
    revision: rec.from, rolledBackTo: rec.to, reason: rec.reason, result: rec.result, message: rec.message,
    creates: counts.create, updates: counts.update, deletes: counts.delete,
  };
  core.bus.emit('gitops_rollback', payload);
  core.bus.emit('ws_message', { type: 'gitops_rollback', payload });
}

/** The sentence of a rollback that was applied. */
export function rolledBackMessage(from: string, to: string, reason: string): string {
  return `revision ${from.slice(0, 12)} was rolled back to ${to.slice(0, 12)}: ${reason}`;
}

/**
 * Why a pinned-out head is not applied: stalled `RolledBack`, naming the breach and the way out.
 * `problems` holds the breach.
 */
export function pinnedOutError(p: PinnedOut): ReconcileError {
  return stalled('RolledBack', `${rolledBackMessage(p.revision, p.rolledBackTo, p.reason)} (at ${iso(p.at)}); push a newer commit, or run gslbctl reconcile --force to apply it again`, { problems: [p.reason] });
}
