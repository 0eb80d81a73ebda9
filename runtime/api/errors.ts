import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GslbError } from '../errors.js';
import { describeAjvError } from '../config/ajv.js';
import { answerMethodNotAllowed } from './methods.js';
import { PARAM_MAX_LENGTH } from './schemas.js';
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
 * The error body of a path prefix whose API has its own shape (the form service's `/public/v1`
 * answers `{name, message}`); every other path answers `{error}`. Parts add theirs to
 * `ApiExtensions.errorShapes`, read when an error is answered before any route is chosen.
 */
export interface ErrorShape { prefix: string; body: (status: number, message: string) => unknown }

/** The body of an error at `path` in the shape of the API it belongs to. */
export function errorBodyAt(path: string, status: number, message: string, shapes: readonly ErrorShape[]): unknown {
  const shape = shapes.find((s) => path === s.prefix || path.startsWith(`${s.prefix}/`));
  return shape ? shape.body(status, message) : { error: message };
}

/**
 * The answer to an error the router raises before any route, hook or handler runs (fastify's
 * `frameworkErrors`), in the shape of the API the path belongs to: a path parameter longer than
 * {@link PARAM_MAX_LENGTH} is the 400 its schema would give (`maxLength`), a path that is not
 * valid percent-encoding a 400, anything else a 500 without internal text.
 */
export function answerFrameworkError(shapes: () => readonly ErrorShape[]) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    const path = req.url.split('?')[0]!;
    let status = 400;
    let message: string;
    if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') message = `a path parameter is longer than ${PARAM_MAX_LENGTH} characters`;
    else if (err.code === 'FST_ERR_BAD_URL') message = 'the URL path is not valid percent-encoding';
    else {
      req.log.error({ err }, 'request failed');
      status = 500;
      message = 'internal server error';
    }
    void reply.status(status).send(errorBodyAt(path, status, message, shapes()));
  };
}

/**
 * The error catalogue of /api/v1 (DESIGN decision 10): every error is `{error: string}` (plus
 * documented extras such as `mfaRequired`). Status codes: 400 validation, malformed JSON or a path
 * parameter past its length, 401 no valid credentials, 403 missing permission, 404 unknown resource
 * or route, 405 a routed path under another method (with `Allow`), 409 owned by git or stale plan,
 * 413 body too large, 415 not JSON, 429 rate limited, 500 unexpected.
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
  app.setNotFoundHandler((req, reply) => {
    if (answerMethodNotAllowed(req, reply, (error) => ({ error }))) return reply;
    return reply.status(404).send({ error: `no route for ${req.method} ${req.url.split('?')[0]}` });
  });
}
