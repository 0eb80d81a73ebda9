import type { Core } from '../app.js';
import { dashboardStats } from '../resources/port.js';

/** Message type of the periodic dashboard statistics (the spec leaves it open; docs/health.md). */
export const STATS_MESSAGE = 'stats_update';
/** How often connected clients receive statistics. */
export const STATS_INTERVAL_MS = 5000;

/**
 * Dashboard statistics (gslb-api.md §2) as seen by a tenant, without an HTTP request:
 * `dashboardStats` only needs the viewer's tenant.
 */
export function statsForTenant(core: Core, tenantId: string | null) {
  return dashboardStats(core, { tenantId });
}
