import type { Core } from '../app.js';
import { toApi } from '../../core/model/public.js';
import { listVisible, type Viewer } from '../tenancy/visibility.js';
import { geoRulesOf, membersOf, visiblePools } from './pool-rows.js';

/**
 * Dashboard statistics (gslb-api.md §2) over the rows and live-feed clients the caller may see;
 * pools and members include the config file's static pool (pool-rows.ts).
 */
export function dashboardStats(core: Core, viewer: Viewer) {
  const s = core.holder.current;
  const pools = visiblePools(core, viewer);
  let totalMembers = 0;
  let healthy = 0;
  for (const p of pools) {
    for (const m of membersOf(core, p.id)) {
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

/** The dashboard's initial-load document (gslb-api.md §2 "Snapshot"), the static pool included. */
export function snapshotDocument(core: Core, viewer: Viewer) {
  const s = core.holder.current;
  const pools = visiblePools(core, viewer);
  const members: Record<string, unknown[]> = {};
  const healthStatus: Record<string, Record<string, { healthy: boolean; score: number; lastChecked: number }>> = {};
  const geoRules: Record<string, unknown[]> = {};
  for (const p of pools) {
    const ms = membersOf(core, p.id);
    members[p.id] = ms.map(toApi);
    const hs: Record<string, { healthy: boolean; score: number; lastChecked: number }> = {};
    for (const m of ms) {
      const e = core.health.get(p.id, m.ipAddress);
      hs[m.ipAddress] = { healthy: e?.healthy ?? true, score: e?.score ?? 1, lastChecked: e?.lastChecked ?? 0 };
    }
    healthStatus[p.id] = hs;
    geoRules[p.id] = geoRulesOf(core, p.id).map(toApi);
  }
  return {
    pools: pools.map(toApi), members, services: listVisible(s, viewer, 'service').map(toApi), healthStatus, geoRules,
    stats: dashboardStats(core, viewer), timestamp: Date.now(),
  };
}

