import type { FastifyError, FastifyInstance } from 'fastify';
import type { ErrorObject } from 'ajv';
import { GslbError } from '../../../errors.js';
import { validationMessage } from '../../../api/errors.js';
import { answerMethodNotAllowed } from '../../../api/methods.js';
import { PUBLIC_ERROR_NAMES, publicStatus, type PublicError } from '../errors.js';

/** The status and message of any error a /public/v1 request can raise. */
export function describePublicError(err: FastifyError | GslbError): { status: number; message: string } {
  if (err instanceof GslbError) return { status: err.status, message: err.message };
  const fe = err as FastifyError & { validation?: ErrorObject[] };
  if (fe.validation) return { status: 400, message: validationMessage(fe.validation, fe.validationContext) };
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return { status: 413, message: 'request body is too large' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': return { status: 415, message: 'content type must be application/json' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY': return { status: 400, message: 'request body is empty; send a JSON object' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY': return { status: 400, message: `malformed JSON: ${err.message}` };
  }
  if (err instanceof SyntaxError) return { status: 400, message: `malformed JSON: ${err.message}` };
  const status = fe.statusCode ?? 500;
  return { status, message: status >= 500 ? 'internal server error' : err.message };
}

/**
 * The error catalogue of /public/v1 (docs/forms.md): every error, and every unrouted path under
 * the prefix (405 with `Allow` when the path is routed under other methods), answers `{name, message}` (forms-api.md §7) instead of the `{error}` of /api/v1.
 * Call inside the prefix's plugin, so it applies to its routes only.
 */
export function registerPublicErrors(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | GslbError, req, reply) => {
    const d = describePublicError(err);
    const status = publicStatus(d.status);
    if (status >= 500) req.log.error({ err }, 'request failed');
    const body: PublicError = { name: PUBLIC_ERROR_NAMES[status], message: d.message };
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((req, reply) => {
    if (answerMethodNotAllowed(req, reply, (message): PublicError => ({ name: 'method_not_allowed', message }))) return reply;
    const body: PublicError = { name: 'not_found', message: `no route for ${req.method} ${req.url.split('?')[0]}` };
    return reply.status(404).send(body);
  });
}
