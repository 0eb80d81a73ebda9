import type { HealthPolicy, RttPolicy } from '../ports/health-view.js';
import { decideHealth, type PolicyName } from './policies.js';
import type { Liveness } from './liveness.js';
import type { PeerHealth } from './peer-health.js';

/**
 * Builds the `HealthPolicy` hook for `core.health.policy` from a policy name, the peers' reports
 * and the live set. Reports of peers that are not live are skipped. Allocation-free (DNS hot
 * path, DESIGN decision 9).
 */
export function makeHealthPolicy(name: PolicyName, peers: PeerHealth, live: Liveness, quorumMinPercent: number): HealthPolicy {
  if (name === 'local-only') return (_p, _ip, local) => local === undefined || local.healthy;
  return (poolId, ip, local) => {
    const reports = peers.reports(poolId, ip);
    let peerReports = 0, peerHealthy = 0;
    if (reports !== undefined) {
      for (const e of reports.values()) {
        if (!live.isLive(e.node)) continue;
        peerReports++;
        if (e.healthy) peerHealthy++;
      }
    }
    return decideHealth(name, { local, peerReports, peerHealthy, quorumMinPercent });
  };
}

/**
 * Builds the `RttPolicy` hook for `core.health.rtt` (gslb-api.md §4: the `rum` fallback orders by
 * probe RTT "using the cluster-wide minimum when available"): the lowest RTT among this node's own
 * measurement and those the live peers report for the endpoint; a report without a measured RTT
 * (0) counts only when there is nothing else. Every node that sees the same reports picks the same
 * member. The `latency` step keeps this node's own RTT (node-to-member). Allocation-free.
 */
export function makeRttPolicy(peers: PeerHealth, live: Liveness): RttPolicy {
  return (poolId, ip, local) => {
    let best = local !== undefined && local.lastChecked > 0 ? local.rttMs : -1;
    const reports = peers.reports(poolId, ip);
    if (reports !== undefined) {
      for (const e of reports.values()) {
        if (e.lastChecked <= 0 || e.rttMs <= 0 || !live.isLive(e.node)) continue;
        if (best <= 0 || e.rttMs < best) best = e.rttMs;
      }
    }
    return best;
  };
}
