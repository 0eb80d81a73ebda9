import type { Core } from '../app.js';
import type { MemberRow, PoolRow } from '../model/types.js';
import { toApi } from '../model/public.js';
import { childrenOf } from '../snapshot/snapshot.js';
import { listVisible, type Viewer } from '../tenancy/visibility.js';

/** Dashboard statistics (gslb-api.md §2) over the rows and live-feed clients the caller may see. */
export function dashboardStats(core: Core, viewer: Viewer) {
  const s = core.holder.current;
  const pools = listVisible<PoolRow>(s, viewer, 'pool');
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
    totalServices: listVisible(s, viewer, 'service').length,
    totalGeoRules: listVisible(s, viewer, 'georule').length,
    uptimeSeconds: Math.floor((Date.now() - core.startedAt) / 1000),
    // the caller's tenant's dashboards only (all of them for supra-tenant callers)
    webSocketClients: core.gauges.webSocketClients(viewer.tenantId),
  };
}

/** The dashboard's initial-load document (gslb-api.md §2 "Snapshot"). */
export function snapshotDocument(core: Core, viewer: Viewer) {
  const s = core.holder.current;
  const pools = listVisible<PoolRow>(s, viewer, 'pool');
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
    pools: pools.map(toApi), members, services: listVisible(s, viewer, 'service').map(toApi), healthStatus, geoRules,
    stats: dashboardStats(core, viewer), timestamp: Date.now(),
  };
}

