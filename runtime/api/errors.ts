import type { FastifyError, FastifyInstance } from 'fastify';
import { GslbError } from '../errors.js';
import { describeAjvError } from '../config/ajv.js';
import type { ErrorObject } from 'ajv';

/**
 * The message of a request that failed its schema: one clause per problem naming the field
 * (`name is required`, `unknown field "x"`, `port: must be <= 65535`), duplicates dropped, joined
 * by `; `. `context` (body, querystring, params) stands in for a problem at the root.
 */
export function validationMessage(errors: readonly ErrorObject[], context: string | undefined): string {
  const msgs = errors.map((e) => {
    const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const field = e.keyword === 'required' ? (e.params as { missingProperty: string }).missingProperty
      : e.keyword === 'additionalProperties' ? (e.params as { additionalProperty: string }).additionalProperty : path;
    if (e.keyword === 'required') return `${field} is required`;
    if (e.keyword === 'additionalProperties') return `unknown field "${field}"`;
    return `${field || context || 'body'}: ${describeAjvError(e)}`;
  });
  return [...new Set(msgs)].join('; ');
}

/**
 * The error catalogue of /api/v1 (DESIGN decision 10): every error is `{error: string}` (plus
 * documented extras such as `mfaRequired`). Status codes: 400 validation or malformed JSON,
 * 401 no valid credentials, 403 missing permission, 404 unknown resource or route, 409 owned by git
 * or stale plan, 413 body too large, 415 not JSON, 429 rate limited, 500 unexpected.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | GslbError, req, reply) => {
    if (err instanceof GslbError) {
      if (err.status >= 500) req.log.error({ err }, 'request failed');
      return reply.status(err.status).send({ error: err.message, ...(err.extra ?? {}) });
    }
    const fe = err as FastifyError & { validation?: ErrorObject[] };
    if (fe.validation) return reply.status(400).send({ error: validationMessage(fe.validation, fe.validationContext) });
    const status = fe.statusCode ?? 500;
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.status(413).send({ error: 'request body is too large' });
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return reply.status(415).send({ error: 'content type must be application/json' });
    if (fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return reply.status(400).send({ error: 'request body is empty; send a JSON object' });
    if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError) return reply.status(400).send({ error: `malformed JSON: ${err.message}` });
    if (status >= 500) {
      req.log.error({ err }, 'request failed');
      return reply.status(500).send({ error: 'internal server error' });
    }
    return reply.status(status).send({ error: err.message });
  });
  app.setNotFoundHandler((req, reply) => reply.status(404).send({ error: `no route for ${req.method} ${req.url.split('?')[0]}` }));
}
