import type { FastifyPluginAsync } from 'fastify';
import type { IdParams } from '../../api/schemas.js';
import type { FormService } from '../forms/service.js';
import { answerAction } from '../forms/routes/action-answer.js';
import type { ActionChange, ActionRef, ActionTest, DeliveryListQuery, TemplatePreview } from '../forms/routes/types.js';
import { requireActionAccess, requireFormAccess } from '../public/access.js';
import { parsePage } from '../public/list.js';
import { formRoute } from '../public/routes/docs.js';
import { callerOf } from '../public/routes/server.js';
import type { DeliveryService } from './service.js';
import { RenderBusyError } from './templates.js';

/**
 * The action routes (forms-api.md §4 `/action*`, `/email-template/preview`; docs/forms.md
 * "Deliveries"): change (config keys merged) and delete, retry the failed deliveries, a test run,
 * the delivery log, and the template preview. A single-form key reaches only its form's actions.
 */
export const deliveryRoutes = (forms: FormService, svc: DeliveryService, onEnabled: (actionId: string) => void): FastifyPluginAsync => async (app) => {
  const action = (req: Parameters<typeof callerOf>[0], id: string) => {
    const caller = callerOf(req);
    const a = forms.requireAction(caller.tenantId, id);
    requireActionAccess(caller, a.formId);
    return a;
  };

  app.patch<{ Params: IdParams; Body: ActionChange }>('/action/:id', formRoute({
    operationId: 'patch_action_id', summary: 'Change an action', scope: 'forms:write', form: 'action', id: true, body: 'ActionChange', errors: [409],
    description: 'Only the sent fields change. `config` keys are merged over the stored config (a key sent as null or "" is removed); `conditions` replace the list. Enabling a paused action clears its pause (`paused_at`, `pause_reason`) and its run of failures. A `webhook` action left without a secret (`config.secret: null` rotates it) gets a new one, shown once as `signing_secret`.',
    success: { status: 200, description: 'the action, secrets masked; `signing_secret` only when one was generated', schema: 'Action' },
  }), async (req, reply) => {
    const { action_id: _bodyId, ...patch } = req.body;
    const { action: a, generatedSecret } = forms.changeAction(action(req, req.params.id), patch);
    if (patch.enabled === true) onEnabled(a.id);
    return answerAction(reply, a, generatedSecret);
  });

  app.delete<{ Params: IdParams; Body: ActionRef }>('/action/:id', formRoute({
    operationId: 'delete_action_id', summary: 'Delete an action with its deliveries', scope: 'forms:write', form: 'action', id: true, body: 'ActionRef', errors: [409],
    success: { status: 200, description: 'what was deleted', schema: 'ActionDeleted' },
  }), async (req) => {
    const a = action(req, req.params.id);
    forms.removeAction(a);
    return { deleted: true as const, action_id: a.id };
  });

  app.post<{ Params: IdParams; Body: ActionRef }>('/action/:id/retry', formRoute({
    operationId: 'post_action_id_retry', summary: "Re-queue an action's failed deliveries", scope: 'forms:write', form: 'action', id: true, body: 'ActionRef',
    success: { status: 200, description: 'how many were queued', schema: 'ActionRetried' },
  }), async (req) => {
    const a = action(req, req.params.id);
    return { action_id: a.id, queued: await svc.retry(a) };
  });

  app.post<{ Params: IdParams; Body: ActionTest }>('/action/:id/test', formRoute({
    operationId: 'post_action_id_test', summary: 'Run an action once on sample data', scope: 'forms:write', form: 'action', id: true, body: 'ActionTest',
    description: 'Really performs the action (the webhook is called, the mail is sent) with `data` as the submission, stores nothing, and answers how it ended. Runs even when the action is disabled.',
    success: { status: 200, description: 'the outcome', schema: 'ActionTestOutcome' },
  }), async (req) => {
    const a = action(req, req.params.id);
    const out = await svc.test(a, forms.require(a.tenantId, a.formId), req.body.data);
    return { action_id: a.id, ok: out.ok, status: out.status, detail: out.detail, duration_ms: out.durationMs };
  });

  app.get<{ Params: IdParams; Querystring: DeliveryListQuery }>('/action/:id/deliveries', formRoute({
    operationId: 'get_action_id_deliveries', summary: "An action's delivery log", scope: 'forms:read', form: 'action', id: true, querystring: 'DeliveryListQuery',
    description: 'Newest first: state, attempts, the last answer or error, when it was sent or is due again.',
    success: { status: 200, description: 'a page of deliveries', schema: 'DeliveryList' },
  }), async (req) => {
    const a = action(req, req.params.id);
    const p = parsePage(req.query);
    return svc.log(a, p.page, p.limit, req.query.state);
  });

  app.post<{ Body: TemplatePreview }>('/email-template/preview', formRoute({
    operationId: 'post_email_template_preview', summary: 'Render a Liquid e-mail template against mock data', scope: 'forms:write', body: 'TemplatePreview', errors: [404],
    description: 'The template sees `submission.<field>` (from `mock_data`), `fields`, `form.name` (with `form_id`), `submission_id` and `created_at`. Output is HTML-escaped unless `| raw`. A template error is a 400 naming its line and column; so is a render past its time limit (the render is ended). Renders run off the answering threads, a few per workspace at once: past that, 429 with Retry-After.',
    success: { status: 200, description: 'the rendered HTML and text', schema: 'TemplateRendered' },
  }), async (req, reply) => {
    const caller = callerOf(req);
    if (req.body.form_id !== undefined) requireFormAccess(caller, 'path', [req.body.form_id]);
    const form = req.body.form_id === undefined ? undefined : forms.require(caller.tenantId, req.body.form_id);
    try {
      return await svc.preview(caller.tenantId, req.body.body, req.body.subject, req.body.mock_data ?? {}, form);
    } catch (err) {
      if (err instanceof RenderBusyError) reply.header('retry-after', String(err.retryAfterS));
      throw err;
    }
  });
};
