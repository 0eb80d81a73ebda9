import type { FastifySchema, RouteShorthandOptions } from 'fastify';
import { apiRef, idParams } from '../../../api/schemas.js';
import type { FormScope } from '../../keys/types.js';
import type { FormAccess } from '../access.js';

/** A `$ref` to a definition of schemas/api-forms.v1.schema.json. */
export const formsRef = (name: string) => apiRef('forms', name);

const ERROR_TEXT: Record<number, string> = {
  400: 'validation_error: the message names the field and the rule',
  401: 'unauthorized: missing or invalid API key',
  403: "forbidden: the key lacks the scope, the plan lacks the feature or the room, or a single-form key reaches another form",
  404: "not_found: no such resource in the key's workspace",
  409: 'conflict: the form is declared in git; change it in the config repo',
  413: 'payload_too_large: request body too large',
  415: 'unsupported_media_type: the body must be application/json',
  429: 'rate_limited: too many requests for this key; retry after Retry-After seconds',
};

/** Error responses, each the `{name, message}` body of /public/v1 (429 with its Retry-After header). */
export function formErrors(...codes: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const c of [...new Set(codes)].sort((a, b) => a - b)) {
    out[c] = { description: ERROR_TEXT[c] ?? 'error', ...(c === 429 ? { headers: { 'retry-after': { type: 'integer', description: 'seconds' } } } : {}), ...formsRef('Error') };
  }
  return out;
}

/**
 * A success body: a JSON definition, or bytes. Bytes are always sent as `application/octet-stream`
 * in an attachment, whatever type the uploader named, so a browser never renders them.
 */
function successBody(schema: string): object {
  if (schema === 'binary') {
    return {
      headers: {
        'content-disposition': { type: 'string', description: 'attachment; filename="<the name the visitor gave>"' },
        'x-content-type-options': { type: 'string', description: 'nosniff' },
      },
      content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    };
  }
  return formsRef(schema);
}

/** One /public/v1 operation as its route declares it. */
export interface FormOperation {
  /** the spec's operation id (forms-api.md §4) */
  operationId: string;
  summary: string;
  description?: string;
  scope: FormScope;
  /** how the route reaches forms, for single-form keys */
  form?: FormAccess;
  /** the path has an `{id}` */
  id?: boolean;
  /** the path's parameters, when it has more than `{id}` */
  params?: object;
  querystring?: string;
  body?: string;
  /** the success body: a definition of api-forms (JSON), or `binary` bytes (a stored file) */
  success: { status: 200 | 201; description: string; schema: string | 'binary' };
  /** error statuses the handler can answer besides the ones every route has */
  errors?: number[];
}

/**
 * The route options of a /public/v1 operation: `ownAuth` (the prefix's plugin authenticates), the
 * scope (`config.scope`, and `x-scope` in the document), bearer security, tag `forms`, and the
 * responses: the success body and `{name, message}` errors: 401, 403 and 429 always; 400 and 404
 * with an id; 400, 413 and 415 with a body; 400 with a query.
 */
export function formRoute(op: FormOperation): RouteShorthandOptions {
  const errors = [401, 403, 429, ...(op.errors ?? [])];
  if (op.id) errors.push(400, 404);
  if (op.body) errors.push(400, 413, 415);
  if (op.querystring) errors.push(400);
  const schema = {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: ['forms'],
    security: [{ bearer: [] }],
    'x-scope': op.scope,
    ...(op.params ? { params: op.params } : op.id ? { params: idParams } : {}),
    ...(op.querystring ? { querystring: formsRef(op.querystring) } : {}),
    ...(op.body ? { body: formsRef(op.body) } : {}),
    response: { [op.success.status]: { description: op.success.description, ...successBody(op.success.schema) }, ...formErrors(...errors) },
  };
  return { config: { ownAuth: true, scope: op.scope, ...(op.form ? { form: op.form } : {}) }, schema: schema as FastifySchema };
}
