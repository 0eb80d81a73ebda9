import type { FastifyPluginAsync } from 'fastify';
import type { IdParams } from '../../../api/schemas.js';
import { callerOf } from '../../public/routes/server.js';
import { formRoute } from '../../public/routes/docs.js';
import { paginate, parsePage } from '../../public/list.js';
import type { FormService } from '../service.js';
import { formView } from '../views.js';
import type { FormChange, FormCreate, FormDelete, FormDuplicate, FormListQuery } from './types.js';

/**
 * /form and /form/{id}: list (paged, sorted), create (201), read, change (only the sent fields),
 * delete (with the exact name, actions included) and duplicate (201, settings, schema and actions).
 */
export const formRoutes = (svc: FormService): FastifyPluginAsync => async (app) => {
  app.get<{ Querystring: FormListQuery }>('/form', formRoute({
    operationId: 'get_form', summary: "List the workspace's forms", scope: 'forms:read', querystring: 'FormListQuery',
    description: 'Paged (`page` from 1, `limit` 1..100, default 20) and sorted (`sort` created_at, updated_at or name; `order` desc or asc). A single-form key sees its form only.',
    success: { status: 200, description: 'a page of forms', schema: 'FormList' },
  }), async (req) => {
    const caller = callerOf(req);
    const page = parsePage(req.query);
    const list = paginate(svc.list(caller.tenantId, caller.formId, req.query.sort ?? 'created_at', req.query.order ?? 'desc'), page);
    return { ...list, data: list.data.map(formView) };
  });
  app.post<{ Body: FormCreate }>('/form', formRoute({
    operationId: 'post_form', summary: 'Create a form', scope: 'forms:write', form: 'new', body: 'FormCreate',
    success: { status: 201, description: 'the new form', schema: 'Form' },
  }), async (req, reply) => reply.status(201).send(formView(svc.create(callerOf(req).tenantId, req.body))));
  app.get<{ Params: IdParams }>('/form/:id', formRoute({
    operationId: 'get_form_id', summary: 'Read a form', scope: 'forms:read', form: 'path', id: true,
    success: { status: 200, description: 'the form', schema: 'Form' },
  }), async (req) => formView(svc.require(callerOf(req).tenantId, req.params.id)));
  app.patch<{ Params: IdParams; Body: FormChange }>('/form/:id', formRoute({
    operationId: 'patch_form_id', summary: 'Change a form', scope: 'forms:write', form: 'path', id: true, body: 'FormChange', errors: [409],
    description: 'Only the sent fields change; null leaves a field as it is (recaptcha_min_score: null switches the check off); lists replace the whole list.',
    success: { status: 200, description: 'the form', schema: 'Form' },
  }), async (req) => {
    const { form_id: _bodyId, ...patch } = req.body;
    return formView(svc.change(svc.require(callerOf(req).tenantId, req.params.id), patch));
  });
  app.delete<{ Params: IdParams; Body: FormDelete }>('/form/:id', formRoute({
    operationId: 'delete_form_id', summary: 'Delete a form with its actions, submissions and files', scope: 'forms:write', form: 'path', id: true, body: 'FormDelete', errors: [409],
    success: { status: 200, description: 'what was deleted', schema: 'FormDeleted' },
  }), async (req) => {
    const form = svc.require(callerOf(req).tenantId, req.params.id);
    const { actionsDeleted, submissionsDeleted } = svc.remove(form, req.body.confirm_name);
    return { deleted: true, form_id: form.id, actions_deleted: actionsDeleted, submissions_deleted: submissionsDeleted };
  });
  app.post<{ Params: IdParams; Body: FormDuplicate }>('/form/:id/duplicate', formRoute({
    operationId: 'post_form_id_duplicate', summary: 'Copy a form with its settings, schema and actions', scope: 'forms:write', form: 'new', id: true, body: 'FormDuplicate',
    success: { status: 201, description: 'the copy', schema: 'Form' },
  }), async (req, reply) => {
    const form = svc.require(callerOf(req).tenantId, req.params.id);
    return reply.status(201).send(formView(svc.duplicate(form, req.body.name)));
  });
};
