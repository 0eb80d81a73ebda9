import type { HttpClient } from '../../net/http-client.js';
import { appliedFields, incidentKey, summarize, type AlertEvent } from '../events.js';
import { hostOf, type AlertTarget } from '../target.js';

/** The public events API; `baseUrl` in the config replaces it (tests, air-gapped proxies). */
export const ONCALL_A_DEFAULT_BASE = 'https://events.pagerduty.com';

/** One `alerts.oncall_a` entry. */
export interface OncallAConfig {
  routingKey: string;
  severity: 'critical' | 'error' | 'warning' | 'info';
  baseUrl?: string;
}

/**
 * The Events API v2 body: `trigger` when a member turns unhealthy or a revision is rejected (or
 * rolled back), `resolve` on recovery (severity always `info`); `dedup_key` is
 * `svc/<poolId>/<ipAddress>`, `svc/gitops/<revision>` or `svc/gitops-rollback/<revision>`. An
 * applied revision is a change event.
 */
export function oncallAEvent(cfg: OncallAConfig, ev: AlertEvent): Record<string, unknown> {
  const resolve = ev.type === 'health_transition' && ev.healthy;
  const details = { ...detailsOf(ev), ...appliedFields(ev) };
  if (ev.type === 'gitops_applied') {
    // a change event (POST /v2/change/enqueue): shown on the service's timeline, opens no incident
    return { routing_key: cfg.routingKey, payload: { summary: summarize(ev).slice(0, 1024), source: ev.node, timestamp: new Date(ev.timestamp).toISOString(), custom_details: details } };
  }
  const payload: Record<string, unknown> = {
    summary: summarize(ev).slice(0, 1024),
    source: ev.node,
    severity: resolve ? 'info' : cfg.severity,
    timestamp: new Date(ev.timestamp).toISOString(),
    class: ev.type === 'health_transition' ? 'health' : 'gitops',
    custom_details: details,
  };
  if (ev.type === 'health_transition') { payload.component = ev.ipAddress; payload.group = ev.poolId; }
  return { routing_key: cfg.routingKey, event_action: resolve ? 'resolve' : 'trigger', dedup_key: incidentKey(ev), client: 'gslbd', payload };
}

function detailsOf(ev: AlertEvent): Record<string, unknown> {
  if (ev.type === 'health_transition') return { poolId: ev.poolId, ipAddress: ev.ipAddress, healthy: ev.healthy, score: ev.score, rttMs: ev.rttMs, node: ev.node };
  if (ev.type === 'gitops_rejected') return { revision: ev.revision, reason: ev.reason, message: ev.message, node: ev.node };
  if (ev.type === 'gitops_rollback') {
    return { revision: ev.revision, rolledBackTo: ev.rolledBackTo, reason: ev.reason, result: ev.result, message: ev.message, creates: ev.creates, updates: ev.updates, deletes: ev.deletes, node: ev.node };
  }
  return { revision: ev.revision, creates: ev.creates, updates: ev.updates, deletes: ev.deletes, node: ev.node };
}

/** The path an event is POSTed to: `/v2/change/enqueue` for an applied revision, else `/v2/enqueue`. */
export function oncallAPath(ev: AlertEvent): string {
  return ev.type === 'gitops_applied' ? '/v2/change/enqueue' : '/v2/enqueue';
}

/** An incident-service target of the first kind: POST {base}/v2/enqueue per event (change events to /v2/change/enqueue). */
export function oncallATarget(cfg: OncallAConfig, index: number, client: HttpClient): AlertTarget {
  const base = (cfg.baseUrl ?? ONCALL_A_DEFAULT_BASE).replace(/\/+$/, '');
  return {
    type: 'oncall_a',
    name: `oncall_a[${index}] (${hostOf(base)})`,
    batch: 1,
    secrets: [cfg.routingKey],
    async deliver([ev], signal) {
      await client.send({ method: 'POST', url: `${base}${oncallAPath(ev!)}`, json: oncallAEvent(cfg, ev!), signal });
    },
  };
}
