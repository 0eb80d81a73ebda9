import type { FastifyPluginAsync } from 'fastify';
import type { IdParams } from '../../../api/schemas.js';
import { callerOf } from '../../public/routes/server.js';
import { formRoute } from '../../public/routes/docs.js';
import { paginate, parsePage } from '../../public/list.js';
import { ACTION_TYPE_TABLE } from '../../actions/index.js';
import type { FormService } from '../service.js';
import { actionView } from '../views.js';
import type { ActionCreate, PageQuery } from './types.js';
import { answerAction } from './action-answer.js';

/** A form's actions (list with secrets masked, create) and the action types. */
export const actionRoutes = (svc: FormService): FastifyPluginAsync => async (app) => {
  app.get('/action-types', formRoute({
    operationId: 'get_action_types', summary: 'The action types with their config keys and an example each', scope: 'forms:read',
    success: { status: 200, description: 'every action type', schema: 'ActionTypes' },
  }), async () => ({ data: ACTION_TYPE_TABLE }));
  app.get<{ Params: IdParams; Querystring: PageQuery }>('/form/:id/action', formRoute({
    operationId: 'get_form_id_action', summary: "List a form's actions", scope: 'forms:read', form: 'path', id: true, querystring: 'PageQuery',
    description: 'In creation order; secrets in each config are masked.',
    success: { status: 200, description: 'a page of actions', schema: 'ActionList' },
  }), async (req) => {
    const form = svc.require(callerOf(req).tenantId, req.params.id);
    const list = paginate(svc.actionsOf(form), parsePage(req.query));
    return { ...list, data: list.data.map(actionView) };
  });
  app.post<{ Params: IdParams; Body: ActionCreate }>('/form/:id/action', formRoute({
    operationId: 'post_form_id_action', summary: 'Add an action to a form', scope: 'forms:write', form: 'path', id: true, body: 'ActionCreate', errors: [409],
    description: 'A `webhook` action sent without `config.secret` gets a Standard Webhooks secret (`whsec_` and 32 random bytes in base64), shown once as `signing_secret` and never again, so every delivery is signed.',
    success: { status: 201, description: 'the new action, secrets masked; `signing_secret` only when one was generated', schema: 'Action' },
  }), async (req, reply) => {
    const form = svc.require(callerOf(req).tenantId, req.params.id);
    const { form_id: _bodyId, ...input } = req.body;
    const { action, generatedSecret } = svc.addAction(form, input);
    return answerAction(reply.status(201), action, generatedSecret);
  });
};
