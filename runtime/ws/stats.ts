import type { FastifyRequest } from 'fastify';
import type { Core } from '../app.js';
import { dashboardStats } from '../api/routes/dashboard.js';

/** Message type of the periodic dashboard statistics (the spec leaves it open; docs/health.md). */
export const STATS_MESSAGE = 'stats_update';
/** How often connected clients receive statistics. */
export const STATS_INTERVAL_MS = 5000;

/**
 * Dashboard statistics (gslb-api.md §2) as seen by a tenant, without an HTTP request:
 * `dashboardStats` only reads the caller's principal to filter rows, so a principal of that tenant
 * stands in for the request.
 */
export function statsForTenant(core: Core, tenantId: string | null) {
  const req = { principal: { kind: tenantId === null ? 'system' : 'user', tenantId, actor: 'ws' } } as unknown as FastifyRequest;
  return dashboardStats(core, req);
}
