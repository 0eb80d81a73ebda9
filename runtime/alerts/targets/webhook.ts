import type { HttpClient } from '../../net/http-client.js';
import { appliedFields, unixSeconds, type AlertEvent } from '../events.js';
import { hostOf, type AlertTarget } from '../target.js';

/**
 * The webhook body. A health flip is `{poolId, ipAddress, healthy, timestamp}` (Unix seconds;
 * gslb-config-auth.md §6); GitOps events carry `type` (`gitops_rejected`; `gitops_rollback` with
 * the bad revision, the one rolled back to, the breach and the rollback plan's counts; for
 * alert-target rows `gitops_applied` with the plan's counts). Every body ends with `appliedCommit`
 * and `secondsSinceApply` when the event carries the served revision (it always does when the
 * daemon queued it).
 */
export function webhookPayload(ev: AlertEvent): Record<string, unknown> {
  const at = unixSeconds(ev.timestamp);
  let body: Record<string, unknown>;
  if (ev.type === 'health_transition') body = { poolId: ev.poolId, ipAddress: ev.ipAddress, healthy: ev.healthy, timestamp: at };
  else if (ev.type === 'gitops_rejected') body = { type: 'gitops_rejected', revision: ev.revision, reason: ev.reason, message: ev.message, timestamp: at };
  else if (ev.type === 'gitops_rollback') {
    body = {
      type: 'gitops_rollback', revision: ev.revision, rolledBackTo: ev.rolledBackTo, reason: ev.reason, result: ev.result, message: ev.message,
      creates: ev.creates, updates: ev.updates, deletes: ev.deletes, timestamp: at,
    };
  } else body = { type: ev.type, revision: ev.revision, creates: ev.creates, updates: ev.updates, deletes: ev.deletes, timestamp: at };
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
