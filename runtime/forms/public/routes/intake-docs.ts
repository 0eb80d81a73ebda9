import type { FastifySchema } from 'fastify';
import type { Config } from '../../../config/types.js';
import { formsRef } from './docs.js';

const params = { type: 'object', properties: { formId: { type: 'string', minLength: 1, description: "the form's id (`GET /public/v1/form/{id}/snippets` hands out the address)" } }, required: ['formId'] } as const;

const ERROR_TEXT: Record<number, string> = {
  400: 'validation_error: an empty submission, a field name past 200 characters, a malformed body',
  403: 'forbidden: submissions disabled, a page the form does not allow, or a plan limit (files, monthly submissions)',
  404: 'not_found: no such form (or not under this custom domain)',
  413: 'payload_too_large: past forms.intake maxBodyBytes, maxFileBytes, maxFiles or maxFields',
  415: 'unsupported_media_type: send application/x-www-form-urlencoded, multipart/form-data or application/json',
  422: "schema_mismatch: the submission breaks the form's enforced schema (each field in `errors`)",
  429: 'rate_limited: too many posts from this address; retry after Retry-After seconds',
};

/** An error answer: `{name, message}` for a JSON caller, a small HTML page for a browser; 429 with Retry-After. */
function errors(...codes: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const c of codes) {
    out[c] = {
      description: ERROR_TEXT[c],
      ...(c === 429 ? { headers: { 'retry-after': { type: 'integer', description: 'seconds' } } } : {}),
      content: { 'application/json': { schema: formsRef('SubmissionError') }, 'text/html': { schema: { type: 'string' } } },
    };
  }
  return out;
}

const cors = {
  'access-control-allow-origin': { type: 'string', description: "the posting page's origin, or * when the form allows any site; absent for a page the form refuses" },
  vary: { type: 'string', description: 'Origin' },
};

/**
 * The OpenAPI side of the public submission endpoint (docs/forms.md "Submitting"), tag `forms`,
 * no credentials. Its body is documented for the three media types and read by the handler
 * (`documentBody`: fastify does not validate it); `limits` are the configured `forms.intake`.
 */
export function intakeDocs(limits: Config['forms']['intake']): { post: FastifySchema; postBody: unknown; preflight: FastifySchema; thanks: FastifySchema } {
  const bounded = (name: string) => ({ allOf: [formsRef(name)], maxProperties: limits.maxFields });
  return {
    postBody: {
      content: {
        'application/x-www-form-urlencoded': { schema: bounded('SubmissionUrlEncoded') },
        'multipart/form-data': { schema: bounded('SubmissionMultipart') },
        'application/json': { schema: bounded('SubmissionJson') },
      },
    },
    post: {
      operationId: 'submitForm',
      summary: "Post a submission to a form (a visitor's browser or script)",
      description: 'A caller that sends `Accept: application/json`, or posts JSON, gets 200 `{ok, next}`; a browser form post gets 303 to `next` '
        + "(the form's `success_redirect` or the built-in thank-you page). A post stored as spam gets the same answer. Errors are `{name, message}` "
        + `for a JSON caller, an HTML page for a browser. Limits: ${limits.maxBodyBytes} bytes of fields, ${limits.maxFiles} files of at most `
        + `${limits.maxFileBytes} bytes, ${limits.maxFields} values.`,
      tags: ['forms'],
      security: [],
      params,
      response: {
        200: { description: 'stored (JSON caller)', headers: cors, content: { 'application/json': { schema: formsRef('SubmissionAccepted') } } },
        303: { description: 'stored (browser): go to the next page', headers: { location: { type: 'string', description: 'the next page' }, ...cors }, type: 'null' },
        ...errors(400, 403, 404, 413, 415, 422, 429),
      },
    },
    preflight: {
      operationId: 'preflightFormSubmission',
      summary: 'CORS preflight of a submission from a page the form allows',
      tags: ['forms'],
      security: [],
      params,
      response: {
        204: {
          description: 'allowed: POST with Content-Type, Accept and X-Requested-With, cached 600 s',
          headers: {
            ...cors,
            'access-control-allow-methods': { type: 'string', description: 'POST, OPTIONS' },
            'access-control-allow-headers': { type: 'string', description: 'Content-Type, Accept, X-Requested-With' },
            'access-control-max-age': { type: 'string', description: '600' },
          },
          type: 'null',
        },
        ...errors(403, 404, 429),
      },
    },
    thanks: {
      operationId: 'getFormThanksPage',
      summary: "The built-in thank-you page (a form without success_redirect)",
      tags: ['forms'],
      security: [],
      params,
      response: {
        200: { description: 'the page', content: { 'text/html': { schema: { type: 'string' } } } },
        ...errors(404),
      },
    },
  };
}
