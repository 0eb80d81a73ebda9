import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../runtime/app.js';
import { apiRef, errorResponses } from '../../runtime/api/schemas.js';
import { dryRun } from '../dry-run.js';
import { planToJson, renderPlanText } from '../render/plan.js';
import { validationEnv } from '../validate/names.js';
import { replayPlan } from './index.js';
import { daemonReplayEnv } from './daemon-env.js';
import type { ReplayBody } from './route-types.js';

/**
 * POST /gitops/replay (`gslbctl diff --replay` against a daemon): plans the files like POST
 * /gitops/plan and replays the query log against the running snapshot and the plan's result,
 * with this node's health and geo databases. Server-wide like the plan (gitops:read). Applies
 * nothing.
 */
export const replayRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.post<{ Body: ReplayBody }>('/gitops/replay', {
    // a whole repo and a query-log sample travel in this body
    bodyLimit: 128 * 1024 * 1024,
    config: { permission: 'gitops:read' },
    schema: {
      operationId: 'replayGitOps', summary: 'Plan manifest files and replay a query log against the current and the planned state', tags: ['gitops'],
      body: apiRef('replay', 'ReplayRequest'),
      response: { 200: { description: 'the problems, or the plan and the answers that would change', ...apiRef('replay', 'ReplayResult') }, ...errorResponses(400) },
    },
  }, async (req) => {
    const { files, log, revision } = req.body;
    const current = core.holder.current;
    const r = dryRun(files, current, { env: validationEnv(core.config, core.env), safety: core.config.gitops.safety, ...(revision ? { revision } : {}) });
    if (!r.plan) return { valid: false, problems: r.problems, plan: null, text: '', replay: null };
    return { valid: true, problems: [], plan: planToJson(r.plan), text: renderPlanText(r.plan), replay: replayPlan(log, current, r.plan, daemonReplayEnv(core)) };
  });
};
