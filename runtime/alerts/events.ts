import type { GitopsRollback, HealthTransition } from '../../core/events/bus.js';

/**
 * The revision the alerting node served when the event happened (docs/alerts.md "What the node
 * serves"): the last applied git commit and when the latest revision (of any origin) was applied.
 * Set by the alerts part when it queues the event; absent on events built elsewhere.
 */
export interface AppliedRef {
  commit: string | null;
  /** Unix ms; null before the first apply */
  at: number | null;
}

/** A health flip to alert on (bus event `health_transition`; `timestamp` in ms). */
export interface HealthAlert {
  type: 'health_transition';
  poolId: string;
  ipAddress: string;
  healthy: boolean;
  timestamp: number;
  node: string;
  score: number;
  rttMs: number;
  applied?: AppliedRef;
}

/** A refused GitOps revision to alert on (bus event `gitops_rejected`; `timestamp` in ms). */
export interface GitopsAlert {
  type: 'gitops_rejected';
  revision: string;
  reason: string;
  message: string;
  timestamp: number;
  node: string;
  applied?: AppliedRef;
}

/**
 * A GitOps revision applied (`gitops_applied`, from a git plan's `plan_applied`; a rollback's apply
 * is announced as `gitops_rollback` instead). Only alert-target rows subscribe to it: it is
 * information, not an incident.
 */
export interface GitopsChangeAlert {
  type: 'gitops_applied';
  revision: string;
  creates: number;
  updates: number;
  deletes: number;
  timestamp: number;
  node: string;
  /** the revision served when the event was queued (alert-target rows' change events) */
  applied?: AppliedRef;
}

/**
 * A revision that breached the health thresholds after its apply (bus event `gitops_rollback`,
 * docs/gitops.md "Automatic rollback"): `revision` is the bad one, `rolledBackTo` the revision
 * re-applied (null when none was: `result` NoGoodRevision or RollbackFailed), `reason` the breach.
 * An incident, like a rejection: the file's targets receive it too.
 */
export interface GitopsRollbackAlert extends GitopsRollback {
  type: 'gitops_rollback';
  timestamp: number;
  node: string;
  applied?: AppliedRef;
}

/** Everything the dispatcher delivers. */
export type AlertEvent = HealthAlert | GitopsAlert | GitopsChangeAlert | GitopsRollbackAlert;

/**
 * The event types the file's `alerts.*` targets receive (gslb-config-auth.md §6, docs/alerts.md):
 * the incidents (health flips, rejections, rollbacks), not applied revisions.
 */
export const FILE_TARGET_EVENTS: ReadonlySet<AlertEvent['type']> = new Set(['health_transition', 'gitops_rejected', 'gitops_rollback']);

/** The incident key shared by oncall_a's dedup_key and oncall_b's alias (gslb-config-auth.md §6). */
export function incidentKey(ev: AlertEvent): string {
  if (ev.type === 'health_transition') return `svc/${ev.poolId}/${ev.ipAddress}`;
  if (ev.type === 'gitops_rollback') return `svc/gitops-rollback/${ev.revision}`;
  return ev.type === 'gitops_applied' ? `svc/gitops-applied/${ev.revision}` : `svc/gitops/${ev.revision}`;
}

/** A one-line human summary, used as incident title and in logs. */
export function summarize(ev: AlertEvent): string {
  if (ev.type === 'health_transition') {
    return `gslbd: member ${ev.ipAddress} of pool ${ev.poolId} is ${ev.healthy ? 'healthy again' : 'unhealthy'}`;
  }
  if (ev.type === 'gitops_rejected') return `gslbd: GitOps revision ${ev.revision.slice(0, 12)} rejected (${ev.reason})`;
  if (ev.type === 'gitops_rollback') {
    return ev.rolledBackTo
      ? `gslbd: GitOps revision ${ev.revision.slice(0, 12)} rolled back to ${ev.rolledBackTo.slice(0, 12)}: ${ev.reason}`
      : `gslbd: GitOps revision ${ev.revision.slice(0, 12)} breached and was not rolled back (${ev.result}): ${ev.reason}`;
  }
  return `gslbd: GitOps revision ${ev.revision.slice(0, 12)} applied (creates=${ev.creates} updates=${ev.updates} deletes=${ev.deletes})`;
}

/** Converts the bus event. */
export function healthAlertOf(t: HealthTransition): HealthAlert {
  return { type: 'health_transition', poolId: t.poolId, ipAddress: t.ipAddress, healthy: t.healthy, timestamp: t.timestamp, node: t.node, score: t.score, rttMs: t.rttMs };
}

/** The served revision as payload fields: `appliedCommit`, and `secondsSinceApply` at the event's time. */
export interface AppliedFields { appliedCommit: string | null; secondsSinceApply: number | null }

/** The payload fields of `ev.applied`, or undefined when the event does not carry it. Pure. */
export function appliedFields(ev: AlertEvent): AppliedFields | undefined {
  const a = ev.applied;
  if (!a) return undefined;
  return { appliedCommit: a.commit, secondsSinceApply: a.at === null ? null : Math.max(0, Math.floor((ev.timestamp - a.at) / 1000)) };
}

/** Unix seconds of an event (webhook payloads, gslb-config-auth.md §6). */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
