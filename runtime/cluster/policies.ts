import type { HealthEntry } from '../health/port.js';

/** The four health policies of gslb-config-auth.md §2 `state.healthPolicy`. */
export type PolicyName = 'prefer-local' | 'local-only' | 'global-any-healthy' | 'global-quorum';

/** What one policy decision sees: the local probe result and the reports of live peer nodes. */
export interface PolicyInput {
  /** this node's own probe result, undefined when it has not probed the endpoint */
  local: HealthEntry | undefined;
  /** live peers (not this node) that report the endpoint */
  peerReports: number;
  /** how many of them see it healthy */
  peerHealthy: number;
  /** 0..100, for global-quorum */
  quorumMinPercent: number;
}

/**
 * Decides whether an endpoint is healthy. Pure; the truth tables are in
 * tests/unit/gitops/canary/policies.test.ts and docs/cluster.md. Edge cases:
 * - nobody reports the endpoint (no local result, no live peer report): healthy under every
 *   policy, the same optimistic start as a single node (gslb-api.md §3);
 * - reports from nodes that are gone (no heartbeat within heartbeatTTL) are not counted;
 *   when every peer is gone the global policies fall back to the local result, then to healthy;
 * - the local result counts as one report in the global policies (this node is always live).
 */
export function decideHealth(policy: PolicyName, input: PolicyInput): boolean {
  const { local, peerReports, peerHealthy } = input;
  switch (policy) {
    case 'local-only':
      return local === undefined || local.healthy;
    case 'prefer-local':
      if (local !== undefined) return local.healthy;
      return peerReports === 0 || peerHealthy > 0;
    case 'global-any-healthy':
      if (local === undefined && peerReports === 0) return true;
      return (local?.healthy ?? false) || peerHealthy > 0;
    case 'global-quorum': {
      const total = peerReports + (local === undefined ? 0 : 1);
      if (total === 0) return true;
      const healthy = peerHealthy + (local?.healthy ? 1 : 0);
      // integer arithmetic: healthy/total >= pct/100
      return healthy * 100 >= input.quorumMinPercent * total;
    }
  }
}
