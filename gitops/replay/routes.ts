import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../runtime/app.js';
import { apiRef, errorResponses } from '../../runtime/api/schemas.js';
import type { GitOpsController } from '../controller.js';
import { planFiles, withField } from '../plan-files.js';
import type { ReplayReport } from './index.js';
import { parseQueryLogSteps } from './query-log.js';
import { Slicer, runSliced } from '../../core/apply/slicer.js';
import { replaySliced } from './hold.js';
import type { ReplayBody } from './route-types.js';

/**
 * POST /gitops/replay (`gslbctl diff --replay` against a daemon): plans the files like POST
 * /gitops/plan and replays the query log against the running snapshot and the plan's result,
 * with this node's health and geo databases. Server-wide like the plan (gitops:read). Applies
 * nothing. Planned in the offload worker when there is one; the replay runs here in slices.
 */
export const replayRoutes = (core: Core, ctl: GitOpsController): FastifyPluginAsync => async (app) => {
  app.post<{ Body: ReplayBody }>('/gitops/replay', {
    // a whole repo and a query-log sample travel in this body
    bodyLimit: 128 * 1024 * 1024,
    config: { permission: 'gitops:read' },
    schema: {
      operationId: 'replayGitOps', summary: 'Plan manifest files and replay a query log against the current and the planned state', tags: ['gitops'],
      body: apiRef('replay', 'ReplayRequest'),
      response: { 200: { description: 'the problems, or the plan and the answers that would change', ...apiRef('replay', 'ReplayResult') }, ...errorResponses(400) },
    },
  }, async (req, reply) => {
    const { files, log, revision } = req.body;
    const r = await planFiles(core, ctl.offload, files, revision, true);
    let replay: ReplayReport | null = null;
    if (r.valid && r.plan) {
      const slicer = new Slicer();
      replay = await replaySliced(core, await runSliced(parseQueryLogSteps(log), slicer), r.plan, slicer);
    }
    // serialized already (by the offload worker when there is one): sent as it is
    return reply.type('application/json; charset=utf-8').send(withField(r.json, 'replay', replay));
  });
};
