import type { FastifyPluginAsync } from 'fastify';
import { callerOf } from '../../public/routes/server.js';
import { formRoute } from '../../public/routes/docs.js';
import { tierView } from '../tiers.js';
import type { FormService } from '../service.js';

/** GET /plan (forms-api.md §4, `get_plan`): the workspace's tier, its limits and what it uses. */
export const planRoutes = (svc: FormService): FastifyPluginAsync => async (app) => {
  app.get('/plan', formRoute({
    operationId: 'get_plan', summary: "The workspace's plan, limits and usage", scope: 'forms:read',
    success: { status: 200, description: 'plan, limits and usage', schema: 'Plan' },
  }), async (req) => {
    const { tenantId } = callerOf(req);
    return tierView(svc.tierOf(tenantId), svc.usage(tenantId));
  });
};
