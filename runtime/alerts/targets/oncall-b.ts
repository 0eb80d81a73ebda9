import type { HttpClient } from '../../net/http-client.js';
import { appliedFields, incidentKey, summarize, type AlertEvent } from '../events.js';
import { hostOf, type AlertTarget } from '../target.js';

/** Alert API base by region; `baseUrl` in the config replaces it. */
export const ONCALL_B_BASES = { us: 'https://api.opsgenie.com', eu: 'https://api.eu.opsgenie.com' } as const;

/** One `alerts.oncall_b` entry. */
export interface OncallBConfig {
  apiKey: string;
  priority: 'P1' | 'P2' | 'P3' | 'P4' | 'P5';
  region: 'us' | 'eu';
  baseUrl?: string;
}

/** One request to the alert API: create on unhealthy or rejection, close (by alias) on recovery. */
export interface OncallBRequest {
  path: string;
  body: Record<string, unknown>;
}

/** Builds the request for an event; the alias is `svc/<poolId>/<ipAddress>` or `svc/gitops/<revision>`. */
export function oncallBRequest(cfg: OncallBConfig, ev: AlertEvent): OncallBRequest {
  const alias = incidentKey(ev);
  const applied = appliedFields(ev);
  if (ev.type === 'health_transition' && ev.healthy) {
    // the close call takes no details: the served revision goes into the note
    const serving = applied ? ` (serving ${applied.appliedCommit ?? 'no commit'}, applied ${applied.secondsSinceApply ?? '-'} s before)` : '';
    return {
      path: `/v2/alerts/${encodeURIComponent(alias)}/close?identifierType=alias`,
      body: { source: `gslbd/${ev.node}`, note: `${summarize(ev)}${serving}` },
    };
  }
  const details: Record<string, string> = ev.type === 'health_transition'
    ? { poolId: ev.poolId, ipAddress: ev.ipAddress, node: ev.node, score: String(ev.score) }
    : ev.type === 'gitops_rejected'
      ? { revision: ev.revision, reason: ev.reason, node: ev.node }
      : ev.type === 'gitops_rollback'
        ? { revision: ev.revision, rolledBackTo: ev.rolledBackTo ?? '', reason: ev.reason, result: ev.result, node: ev.node }
        : { revision: ev.revision, creates: String(ev.creates), updates: String(ev.updates), deletes: String(ev.deletes), node: ev.node };
  const description = ev.type === 'health_transition' ? `${summarize(ev)} (reported by ${ev.node})`
    : ev.type === 'gitops_rejected' || ev.type === 'gitops_rollback' ? `${summarize(ev)}: ${ev.message}` : summarize(ev);
  // the alert API takes string details only
  if (applied) Object.assign(details, { appliedCommit: applied.appliedCommit ?? '', secondsSinceApply: applied.secondsSinceApply === null ? '' : String(applied.secondsSinceApply) });
  return {
    path: '/v2/alerts',
    body: {
      // the API caps message at 130 characters and description at 15000
      message: summarize(ev).slice(0, 130),
      alias,
      description: description.slice(0, 15000),
      source: `gslbd/${ev.node}`,
      // an applied revision is information, not an incident
      priority: ev.type === 'gitops_applied' ? 'P5' : cfg.priority,
      tags: ['gslbd', ev.type === 'health_transition' ? 'health' : 'gitops'],
      details,
      ...(ev.type === 'health_transition' ? { entity: ev.ipAddress } : {}),
    },
  };
}

/** An incident-service target of the second kind, authenticated with `Authorization: GenieKey <apiKey>`. */
export function oncallBTarget(cfg: OncallBConfig, index: number, client: HttpClient): AlertTarget {
  const base = (cfg.baseUrl ?? ONCALL_B_BASES[cfg.region]).replace(/\/+$/, '');
  return {
    type: 'oncall_b',
    name: `oncall_b[${index}] (${hostOf(base)})`,
    batch: 1,
    secrets: [cfg.apiKey],
    async deliver([ev], signal) {
      const r = oncallBRequest(cfg, ev!);
      await client.send({ method: 'POST', url: `${base}${r.path}`, json: r.body, headers: { authorization: `GenieKey ${cfg.apiKey}` }, signal });
    },
  };
}
