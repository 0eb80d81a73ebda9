import type { HealthView } from '../ports/health-view.js';
import type { ZoneIndex } from './zone-index.js';

/**
 * One endpoint's health as the main thread decides it, under the active policy (cluster policies
 * included): pool id, address, healthy, score, RTT ms, last checked (ms; 0 = never), and the
 * cluster-wide RTT ms the `rum` fallback orders by (HealthView.rttMs; -1 = none; left out: this
 * node's RTT). What the main thread writes to the health board.
 */
export type HealthRow = [poolId: string, ip: string, healthy: boolean, score: number, rttMs: number, lastChecked: number, clusterRttMs?: number];

/** One endpoint's verdict; undefined when it has no entry and the policy accepts it (the optimistic start). */
function verdictRow(pool: string, ip: string, health: HealthView): HealthRow | undefined {
  const e = health.get(pool, ip);
  const ok = health.isHealthy(pool, ip);
  const rtt = health.rttMs(pool, ip);
  if (!e && ok && rtt < 0) return undefined;
  return [pool, ip, ok, e?.score ?? 1, e?.rttMs ?? 0, e?.lastChecked ?? 0, rtt];
}

/**
 * The health verdicts the workers need: every endpoint of every served plan that has an entry or
 * that the active policy rejects (an endpoint with neither is healthy in the worker too, the
 * optimistic start). O(endpoints); the main thread runs it at most once per event-loop turn.
 */
export function healthTable(ix: ZoneIndex, health: HealthView): HealthRow[] {
  const out: HealthRow[] = [];
  const seen = new Set<string>();
  // the services of one pool answer from the same members: each pool is visited once
  const pools = new Set<string>();
  const plans = [...ix.services.values()].map((s) => s.plan);
  if (ix.staticPlan) plans.push(ix.staticPlan);
  for (const p of plans) {
    const pool = p.poolId ?? '';
    if (pools.has(pool)) continue;
    pools.add(pool);
    for (const m of p.members) {
      const key = `${pool}\u0000${m.ip}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const row = verdictRow(pool, m.ip, health);
      if (row) out.push(row);
    }
  }
  return out;
}

/**
 * The verdicts of the endpoints named in `changed` (HealthView.takeChanges), for a board that
 * already holds the earlier ones: a row for each endpoint with an entry or that the policy
 * rejects, and in `cleared` the ones with neither (healthy by the optimistic start: the board
 * clears its entry). O(changed endpoints).
 */
export function healthDelta(changed: readonly [string, string][], health: HealthView): { rows: HealthRow[]; cleared: [string, string][] } {
  const rows: HealthRow[] = [];
  const cleared: [string, string][] = [];
  for (const [pool, ip] of changed) {
    const row = verdictRow(pool, ip, health);
    if (row) rows.push(row);
    else cleared.push([pool, ip]);
  }
  return { rows, cleared };
}
