import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Core } from '../../app.js';
import type { MemberRow, PoolRow } from '../../model/types.js';
import { toApi } from '../../model/public.js';
import { childrenOf } from '../../snapshot/snapshot.js';
import { listVisible } from './access.js';

/** Dashboard statistics (gslb-api.md §2) over the rows the caller may see. */
export function dashboardStats(core: Core, req: FastifyRequest) {
  const s = core.holder.current;
  const pools = listVisible<PoolRow>(s, req, 'pool');
  let totalMembers = 0;
  let healthy = 0;
  for (const p of pools) {
    for (const m of childrenOf<MemberRow>(s, p.id, 'member')) {
      totalMembers++;
      if (core.health.isHealthy(m.poolId, m.ipAddress)) healthy++;
    }
  }
  return {
    totalPools: pools.length,
    totalMembers,
    healthyMembers: healthy,
    unhealthyMembers: totalMembers - healthy,
    totalServices: listVisible(s, req, 'service').length,
    totalGeoRules: listVisible(s, req, 'georule').length,
    uptimeSeconds: Math.floor((Date.now() - core.startedAt) / 1000),
    webSocketClients: core.gauges.webSocketClients(),
  };
}

/** The dashboard's initial-load document (gslb-api.md §2 "Snapshot"). */
export function snapshotDocument(core: Core, req: FastifyRequest) {
  const s = core.holder.current;
  const pools = listVisible<PoolRow>(s, req, 'pool');
  const members: Record<string, unknown[]> = {};
  const healthStatus: Record<string, Record<string, { healthy: boolean; score: number; lastChecked: number }>> = {};
  const geoRules: Record<string, unknown[]> = {};
  for (const p of pools) {
    const ms = childrenOf<MemberRow>(s, p.id, 'member');
    members[p.id] = ms.map(toApi);
    const hs: Record<string, { healthy: boolean; score: number; lastChecked: number }> = {};
    for (const m of ms) {
      const e = core.health.get(p.id, m.ipAddress);
      hs[m.ipAddress] = { healthy: e?.healthy ?? true, score: e?.score ?? 1, lastChecked: e?.lastChecked ?? 0 };
    }
    healthStatus[p.id] = hs;
    geoRules[p.id] = childrenOf(s, p.id, 'georule').map(toApi);
  }
  return {
    pools: pools.map(toApi), members, services: listVisible(s, req, 'service').map(toApi), healthStatus, geoRules,
    stats: dashboardStats(core, req), timestamp: Date.now(),
  };
}

/** GET /dashboard/stats, GET /snapshot and GET /health. */
export const dashboardRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.get('/health', { config: { public: true }, schema: { tags: ['system'] } }, async () => ({ status: 'ok' }));
  app.get('/dashboard/stats', { config: { permission: 'pools:read' }, schema: { tags: ['dashboard'] } }, async (req) => dashboardStats(core, req));
  app.get('/snapshot', { config: { permission: 'pools:read' }, schema: { tags: ['dashboard'] } }, async (req, reply) => {
    // Serialised once here: the document is large and has no response schema to speed it up.
    reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(snapshotDocument(core, req));
  });
};
