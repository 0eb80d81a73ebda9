import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Core } from '../../app.js';
import { dashboardStats, snapshotDocument } from '../dashboard.js';
import { apiRef, errorResponses } from '../../api/schemas.js';

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
  const body = JSON.stringify(snapshotDocument(core, req.principal));
  byTenant.set(tenant, { healthVersion: core.health.version, at: now, body });
  return body;
}

/** GET /dashboard/stats, GET /snapshot and GET /health. */
export const dashboardRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  // `starting` while the daemon's parts (DNS among them) are still starting behind a listening API,
  // so `gslbctl wait --ready` does not return before DNS answers (docs/demo.md)
  app.get('/health', {
    config: { public: true },
    schema: { operationId: 'getHealth', summary: 'Liveness of the API', tags: ['system'], response: { 200: { description: 'ok, or starting while the parts start', ...apiRef('system', 'Health') } } },
  }, async () => ({ status: core.ports.started === false ? 'starting' : 'ok' }));
  app.get('/dashboard/stats', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getDashboardStats', summary: 'Dashboard statistics', tags: ['dashboard'], response: { 200: { description: 'counts over what the caller may see', ...apiRef('resources', 'DashboardStats') }, ...errorResponses() } },
  }, async (req) => dashboardStats(core, req.principal));
  // The body is serialised once per second at most (snapshotBody) and sent as that string: the
  // schema documents it; it does not serialise it.
  app.get('/snapshot', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getSnapshot', summary: "The dashboard's initial-load document", tags: ['dashboard'], response: { 200: { description: 'pools, members, health, geo rules, services and statistics', ...apiRef('resources', 'Snapshot') }, ...errorResponses() } },
  }, async (req, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8');
    return snapshotBody(core, req);
  });
};
