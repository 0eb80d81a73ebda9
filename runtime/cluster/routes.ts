import type { FastifyInstance } from 'fastify';
import type { Core } from '../app.js';
import type { ClusterState } from './cluster-state.js';
import { apiRef, errorResponses } from '../api/schemas.js';
import type { ClusterHealthQuery } from './route-types.js';

/**
 * Read-only cluster routes under /api/v1 (permission `cluster:read`, server-wide: docs/security.md):
 * - `GET /cluster`: this node, connection, live peers with their config sequence, config sync
 *   progress (and the canary plan it holds), git leader, the latest canary revision;
 * - `GET /cluster/health[?poolId=&ipAddress=]`: the reports of every node for each endpoint (the
 *   local entry included, with `node`), each with `live` and `receivedAt`, and for one endpoint
 *   the `healthy` verdict DNS uses under the active policy.
 */
export function clusterRoutes(core: Core, state: ClusterState) {
  return async (app: FastifyInstance) => {
    app.get('/cluster', {
      config: { permission: 'cluster:read' },
      schema: { operationId: 'getClusterStatus', summary: 'This node and the cluster', tags: ['cluster'], response: { 200: { description: 'the cluster as this node sees it', ...apiRef('cluster', 'ClusterStatus') }, ...errorResponses() } },
    }, async () => {
      const live = state.live.liveSet();
      return {
        enabled: state.enabled, cluster: state.cluster, node: state.node, policy: state.policy, connected: state.connected(),
        liveNodes: [state.node, ...live].sort(),
        peers: state.live.all().map((p) => ({ node: p.node, live: live.has(p.node), lastSeen: p.lastSeen, configSeq: p.configSeq, configRevision: p.configRevision })),
        config: state.config(),
        gitLeader: { holds: state.gitLeader.holds(), leader: state.gitLeader.leader() ?? null },
        canary: state.canary(),
      };
    });
    app.get<{ Querystring: ClusterHealthQuery }>('/cluster/health', {
      config: { permission: 'cluster:read' },
      schema: {
        operationId: 'getClusterHealth', summary: "Every node's health reports", tags: ['cluster'], querystring: apiRef('cluster', 'ClusterHealthQuery'),
        response: { 200: { description: 'the reports, and the verdict for one endpoint', ...apiRef('cluster', 'ClusterHealth') }, ...errorResponses(400) },
      },
    }, async (req) => {
      const q = req.query;
      const local = [];
      for (const [poolId, ips] of core.health.pools()) for (const [ip, e] of ips) local.push({ poolId, ipAddress: ip, ...e, node: state.node, live: true, receivedAt: e.lastChecked });
      const peers = state.peers.all().map(([poolId, ip, e]) => ({ poolId, ipAddress: ip, ...e, live: state.live.isLive(e.node) }));
      let entries = [...local, ...peers];
      if (q.poolId !== undefined) entries = entries.filter((e) => e.poolId === q.poolId);
      if (q.ipAddress !== undefined) entries = entries.filter((e) => e.ipAddress === q.ipAddress);
      const verdict = q.poolId !== undefined && q.ipAddress !== undefined ? { healthy: core.health.isHealthy(q.poolId, q.ipAddress) } : {};
      return { node: state.node, policy: state.policy, ...verdict, entries };
    });
  };
}
