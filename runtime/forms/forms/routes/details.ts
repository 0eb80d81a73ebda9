import type { FastifyPluginAsync } from 'fastify';
import type { IdParams } from '../../../api/schemas.js';
import { callerOf } from '../../public/routes/server.js';
import { formRoute } from '../../public/routes/docs.js';
import type { FormService } from '../service.js';
import { buildSnippets } from '../snippets.js';
import { formView } from '../views.js';
import type { SchemaPut } from './types.js';

/**
 * A form's expected-field schema (PUT), the field names it receives and its paste-in snippets.
 * `publicURL` is `api.publicURL`; without it the snippets use the request's own origin.
 */
export const formDetailRoutes = (svc: FormService, publicURL: () => string | undefined): FastifyPluginAsync => async (app) => {
  app.put<{ Params: IdParams; Body: SchemaPut }>('/form/:id/schema', formRoute({
    operationId: 'put_form_id_schema', summary: "Replace a form's expected-field schema", scope: 'forms:write', form: 'path', id: true, body: 'SchemaPut', errors: [409],
    description: 'An empty list clears the schema. `enforce` (default false): submissions that do not match are refused with 422; otherwise the fields only document the form.',
    success: { status: 200, description: 'the form with its new schema', schema: 'Form' },
  }), async (req) => {
    const form = svc.require(callerOf(req).tenantId, req.params.id);
    return formView(svc.putSchema(form, req.body.fields, req.body.enforce));
  });
  app.get<{ Params: IdParams }>('/form/:id/fields', formRoute({
    operationId: 'get_form_id_fields', summary: 'The field names a form receives', scope: 'forms:read', form: 'path', id: true,
    description: "The names submissions actually carried (`source: submissions`); until there are some, the expected-field schema's (`source: schema`).",
    success: { status: 200, description: 'the field names', schema: 'FormFields' },
  }), async (req) => {
    const form = svc.require(callerOf(req).tenantId, req.params.id);
    return { form_id: form.id, ...svc.fieldsOf(form) };
  });
  app.get<{ Params: IdParams }>('/form/:id/snippets', formRoute({
    operationId: 'get_form_id_snippets', summary: "A form's public address and paste-in snippets", scope: 'forms:read', form: 'path', id: true,
    success: { status: 200, description: 'the endpoint URL, an HTML form and a fetch() call', schema: 'Snippets' },
  }), async (req) => {
    const form = svc.require(callerOf(req).tenantId, req.params.id);
    return buildSnippets(form, publicURL() ?? `${req.protocol}://${req.host}`);
  });
};
