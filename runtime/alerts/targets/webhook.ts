import type { HttpClient } from '../../net/http-client.js';
import { appliedFields, unixSeconds, type AlertEvent } from '../events.js';
import { hostOf, type AlertTarget } from '../target.js';

/**
 * The webhook body. A health flip is `{poolId, ipAddress, healthy, timestamp}` (Unix seconds;
 * gslb-config-auth.md §6); GitOps events carry `type` (`gitops_rejected`, and for alert-target rows
 * `gitops_applied` and `gitops_rollback` with the plan's counts). Every body ends with
 * `appliedCommit` and `secondsSinceApply` when the event carries the served revision (it always
 * does when the daemon queued it).
 */
export function webhookPayload(ev: AlertEvent): Record<string, unknown> {
  const body: Record<string, unknown> = ev.type === 'health_transition'
    ? { poolId: ev.poolId, ipAddress: ev.ipAddress, healthy: ev.healthy, timestamp: unixSeconds(ev.timestamp) }
    : ev.type === 'gitops_rejected'
      ? { type: 'gitops_rejected', revision: ev.revision, reason: ev.reason, message: ev.message, timestamp: unixSeconds(ev.timestamp) }
      : { type: ev.type, revision: ev.revision, creates: ev.creates, updates: ev.updates, deletes: ev.deletes, timestamp: unixSeconds(ev.timestamp) };
  return { ...body, ...appliedFields(ev) };
}

/**
 * A webhook target: POSTs the JSON payload; with a secret, the header
 * `X-Svc-Signature: sha256=<hex HMAC-SHA256 of the raw body>`. Any 2xx is success.
 */
export function webhookTarget(cfg: { url: string; secret?: string }, index: number, client: HttpClient): AlertTarget {
  return {
    type: 'webhook',
    name: `webhook[${index}] (${hostOf(cfg.url)})`,
    batch: 1,
    secrets: cfg.secret ? [cfg.secret] : [],
    async deliver([ev], signal) {
      await client.send({ method: 'POST', url: cfg.url, json: webhookPayload(ev!), signal, ...(cfg.secret ? { sign: { secret: cfg.secret } } : {}) });
    },
  };
}
