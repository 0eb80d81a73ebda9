import { PARTS } from '../parts.js';
import { poolRoutes } from './routes/pools.js';
import { memberRoutes } from './routes/members.js';
import { serviceRoutes } from './routes/services.js';
import { healthCheckRoutes } from './routes/healthchecks.js';
import { geoRuleRoutes } from './routes/georules.js';
import { statusRoutes } from './routes/status.js';
import { dashboardRoutes } from './routes/dashboard.js';

/**
 * The resources part: the REST face of the rows every other part serves (gslb-api.md §3–§5):
 * pools, members, services, health checks and geo rules (each write a Plan through `core.apply`),
 * member and pool status, the dashboard statistics, the snapshot document and GET /health.
 */
PARTS.push({
  name: 'resources',
  setup(core, ext) {
    for (const p of [poolRoutes, memberRoutes, serviceRoutes, healthCheckRoutes, geoRuleRoutes, statusRoutes, dashboardRoutes]) {
      const plugin = p(core);
      ext.apiPlugins.push(async (app) => { await app.register(plugin); });
    }
  },
});
