import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadSchema, PACKAGE_ROOT } from '../paths.js';

type SchemaDoc = { $id: string; $defs: Record<string, unknown> };

/** The shared resource schema document (schemas/resources.v1.schema.json): request bodies shared with manifests. */
export const resourceSchema = loadSchema<SchemaDoc>('resources.v1.schema.json');

/**
 * The REST API's own schema documents, `schemas/api-<area>.v1.schema.json` (request and response
 * bodies of one area: resources, auth, gitops…), each with `$id` equal to its file name. Every
 * route's schemas are `$ref`s into these files or resources.v1, so the OpenAPI document covers
 * every route and `gslbd` validates and serialises with the same definitions.
 */
export const apiSchemas: SchemaDoc[] = readdirSync(join(PACKAGE_ROOT, 'schemas'))
  .filter((f) => /^api-[a-z-]+\.v1\.schema\.json$/.test(f)).sort()
  .map((f) => loadSchema<SchemaDoc>(f));

/** A JSON-Schema `$ref` to a definition of the shared resource schema. */
export const ref = (name: string) => ({ $ref: `${resourceSchema.$id}#/$defs/${name}` });

/** A JSON-Schema `$ref` to a definition of `schemas/api-<area>.v1.schema.json`. */
export const apiRef = (area: string, name: string) => ({ $ref: `api-${area}.v1.schema.json#/$defs/${name}` });

/**
 * The OpenAPI component name of a schema file: its name without `.v1.schema.json` (`resources`,
 * `api-dns`). Each `$defs` entry becomes the component `<that name>-<definition>`
 * (`api-resources-Pool`), stable whatever else is registered.
 */
export const componentName = (schemaId: string) => schemaId.replace(/\.v1\.schema\.json$/, '');

/**
 * A reference, inside the OpenAPI document, to a definition of `schemas/api-<area>.v1.schema.json`:
 * for `x-` extensions, which the document carries as they are (WebSocket message schemas).
 */
export const documentRef = (area: string, name: string) => ({ $ref: `#/components/schemas/${componentName(`api-${area}.v1.schema.json`)}-${name}` });

/**
 * Error responses of a route that needs credentials, every one the catalogue's `{error}` body
 * (runtime/api/errors.ts) with the documented extras kept (`additionalProperties`): 401 and 403
 * (the auth hook answers them on every non-public route) plus `codes`, the ones the validator and
 * the handler can answer (400 for a body or params schema, 404 for an `:id`, 409 for a write to a
 * git-owned row). 413 and 415 are global and not listed per route.
 */
export function errorResponses(...codes: number[]): Record<number, unknown> {
  return publicErrorResponses(401, 403, ...codes);
}

/** Error responses of a public route (no auth hook answer): exactly `codes`. */
export function publicErrorResponses(...codes: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const c of codes) out[c] = { description: ERROR_TEXT[c] ?? 'error', ...ref('Error') };
  return out;
}

/** The response of a route that answers 204 with no body. */
export const noContent = (description: string) => ({ 204: { description, type: 'null' } });

const ERROR_TEXT: Record<number, string> = {
  400: 'invalid request: the message names the field and the rule',
  401: 'no valid credentials',
  403: 'the caller lacks the permission, or the resource belongs to another owner',
  404: 'not found',
  409: 'conflict: a git-owned row, a name in use, or a stale plan',
  413: 'request body too large',
  415: 'content type must be application/json',
  422: 'the request is well-formed but cannot be carried out',
  426: 'upgrade required: open this route as a WebSocket',
  429: 'too many attempts; retry later',
  500: 'internal error',
  502: 'an upstream (git, SMTP, identity provider) failed',
  503: 'not ready, or the feature is switched off',
};

/**
 * The longest path parameter: every `{id}` schema's `maxLength`, and the router's `maxParamLength`
 * (runtime/api/server.ts), so the two never disagree.
 */
export const PARAM_MAX_LENGTH = 200;

/** Path parameters of an `/{id}` route. */
export const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: PARAM_MAX_LENGTH, description: 'resource id' } }, required: ['id'] } as const;

/** The TypeScript shape of {@link idParams}. */
export type IdParams = { id: string };
