import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Core } from '../../app.js';
import type { MemberRow, PoolRow } from '../../model/types.js';
import { toApi } from '../../model/public.js';
import { childrenOf } from '../../snapshot/snapshot.js';
import { listVisible } from './access.js';

/** Dashboard statistics (gslb-api.md §2) over the rows and live-feed clients the caller may see. */
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
    // the caller's tenant's dashboards only (all of them for supra-tenant callers)
    webSocketClients: core.gauges.webSocketClients(req.principal.tenantId),
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

type Cached = { healthVersion: number; at: number; body: string };
const SNAPSHOT_CACHE = new WeakMap<object, Map<string, Cached>>();
/** How long a serialised snapshot document may be reused while nothing changed (stats freshness). */
const SNAPSHOT_CACHE_MS = 1000;

/**
 * The serialised snapshot document, reused while the runtime snapshot, the health view and the
 * caller's tenant are the same and it is less than a second old. Building it for 10,000 members
 * takes tens of milliseconds; the dashboard's initial load should not pay that every time.
 */
function snapshotBody(core: Core, req: FastifyRequest): string {
  const snap = core.holder.current;
  const tenant = req.principal.tenantId ?? '*';
  let byTenant = SNAPSHOT_CACHE.get(snap);
  if (!byTenant) SNAPSHOT_CACHE.set(snap, (byTenant = new Map()));
  const hit = byTenant.get(tenant);
  const now = Date.now();
  if (hit && hit.healthVersion === core.health.version && now - hit.at < SNAPSHOT_CACHE_MS) return hit.body;
  const body = JSON.stringify(snapshotDocument(core, req));
  byTenant.set(tenant, { healthVersion: core.health.version, at: now, body });
  return body;
}

/** GET /dashboard/stats, GET /snapshot and GET /health. */
export const dashboardRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  // `starting` while the daemon's parts (DNS among them) are still starting behind a listening API,
  // so `gslbctl wait --ready` does not return before DNS answers (docs/demo.md)
  app.get('/health', { config: { public: true }, schema: { tags: ['system'] } }, async () => ({ status: core.info.started === false ? 'starting' : 'ok' }));
  app.get('/dashboard/stats', { config: { permission: 'pools:read' }, schema: { tags: ['dashboard'] } }, async (req) => dashboardStats(core, req));
  app.get('/snapshot', { config: { permission: 'pools:read' }, schema: { tags: ['dashboard'] } }, async (req, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8');
    return snapshotBody(core, req);
  });
};
