import type { FastifyPluginAsync } from 'fastify';
import { callerOf } from '../../public/routes/server.js';
import { formRoute } from '../../public/routes/docs.js';
import { planView } from '../plans.js';
import type { FormService } from '../service.js';

/** GET /plan: the workspace's plan, its limits and what it uses. */
export const planRoutes = (svc: FormService): FastifyPluginAsync => async (app) => {
  app.get('/plan', formRoute({
    operationId: 'get_plan', summary: "The workspace's plan, limits and usage", scope: 'forms:read',
    success: { status: 200, description: 'plan, limits and usage', schema: 'Plan' },
  }), async (req) => {
    const { tenantId } = callerOf(req);
    return planView(svc.planOf(tenantId), svc.usage(tenantId));
  });
};
