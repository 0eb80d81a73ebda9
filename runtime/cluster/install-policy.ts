import type { HealthPolicy } from '../health/port.js';
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
