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
 * Error responses of a route, every one the catalogue's `{error}` body (runtime/api/errors.ts),
 * with the documented extras kept (`additionalProperties`). Pass the codes the route can answer
 * besides the auth hook's 401/403, which every non-public route gets from `errorResponses`.
 */
export function errorResponses(...codes: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const c of codes) out[c] = { description: ERROR_TEXT[c] ?? 'error', ...ref('Error') };
  return out;
}

const ERROR_TEXT: Record<number, string> = {
  400: 'invalid request: the message names the field and the rule',
  401: 'no valid credentials',
  403: 'the caller lacks the permission, or the resource belongs to another owner',
  404: 'not found',
  409: 'conflict: a git-owned row, a name in use, or a stale plan',
  413: 'request body too large',
  415: 'content type must be application/json',
  422: 'the request is well-formed but cannot be carried out',
  429: 'too many attempts; retry later',
  500: 'internal error',
  502: 'an upstream (git, SMTP, identity provider) failed',
  503: 'not ready, or the feature is switched off',
};

export const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['id'] } as const;
