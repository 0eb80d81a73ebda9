import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Ajv, type ValidateFunction } from 'ajv';
import { addProjectFormats } from '../../runtime/config/ajv.js';
import type { Part } from '../../runtime/parts.js';

/** The parts of an OpenAPI 3.0 document the check reads. */
export interface OpenApiDoc {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  components?: { schemas?: Record<string, unknown> };
}

/** What the check saw: violations (unique, with a count) and how many responses and JSON bodies it checked. */
export interface OpenApiCheck {
  /** the part to put first in the daemon's parts list */
  part: Part;
  /** responses of documented-or-not /api/v1, /public/v1 and /f/ routes examined */
  readonly checked: number;
  /** JSON bodies validated against their schema */
  readonly bodies: number;
  /** one line per distinct violation */
  violations(): string[];
}

export const DOC_ID = 'openapi.json';

/**
 * OpenAPI 3.0 schema → draft-07 for ajv: `nullable: true` becomes a `null` member of `type` (and of
 * `enum`), and component references point into the document added under {@link DOC_ID}.
 */
export function toDraft07(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toDraft07);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = toDraft07(v);
  if (typeof out.$ref === 'string' && out.$ref.startsWith('#/components/')) out.$ref = `${DOC_ID}${out.$ref}`;
  if (out.nullable === true) {
    delete out.nullable;
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
  }
  return out;
}

/** `/api/v1/pools/:id` → `/api/v1/pools/{id}`, as the document spells paths. */
const docPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/** What kind of mismatch a violation is. */
export type ViolationKind = 'route' | 'status' | 'media-type' | 'schema';

/** The outcome of checking one response: the violation and its kind, if any, and whether a JSON body was validated. */
export interface ResponseCheck { violation?: string; kind?: ViolationKind; validated: boolean }

/**
 * Builds the checker of one response against the document: the route and method are documented,
 * the status is (exactly, as `4XX`, or `default`), the media type is one the response documents,
 * and a JSON body validates against its schema. Returns the violation, or undefined.
 */
export function responseChecker(doc: OpenApiDoc) {
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, logger: false });
  addProjectFormats(ajv);
  ajv.addSchema({ $id: DOC_ID, components: toDraft07(doc.components ?? {}) });
  const compiled = new Map<string, ValidateFunction>();
  return (method: string, path: string, status: number, mediaType: string, body: string | undefined): ResponseCheck => {
    const where = `${method} ${path} → ${status}`;
    const op = doc.paths[path]?.[method.toLowerCase()];
    if (!op) return { violation: `${method} ${path}: route not in the document`, kind: 'route', validated: false };
    const responses = op.responses ?? {};
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => responses[k] !== undefined);
    if (key === undefined) return { violation: `${where}: status not documented (documented: ${Object.keys(responses).join(', ')})`, kind: 'status', validated: false };
    if (body === undefined || body === '') return { validated: false };
    const content = responses[key]!.content;
    if (!content) return { violation: `${where}: a ${mediaType || 'body'} body, but the response documents none`, kind: 'media-type', validated: false };
    const media = Object.keys(content).find((m) => m === mediaType) ?? (isJson(mediaType) ? Object.keys(content).find(isJson) : undefined);
    if (media === undefined) return { violation: `${where}: media type ${mediaType} not documented (documented: ${Object.keys(content).join(', ')})`, kind: 'media-type', validated: false };
    if (!isJson(mediaType)) return { validated: false };
    const schema = content[media]!.schema;
    if (schema === undefined) return { violation: `${where}: no schema for the JSON body`, kind: 'schema', validated: false };
    let data: unknown;
    try { data = JSON.parse(body); } catch { return { violation: `${where}: the body is not JSON`, kind: 'schema', validated: false }; }
    const id = `${method} ${path} ${key} ${media}`;
    let validate = compiled.get(id);
    if (!validate) compiled.set(id, (validate = ajv.compile(toDraft07(schema) as object)));
    if (validate(data)) return { validated: true };
    return { violation: `${where}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`, kind: 'schema', validated: true };
  };
}

/**
 * The response check of the integration tests: a daemon part whose setup puts, first in the
 * /api/v1 plugins, a plugin that is not encapsulated (`skip-override`), so its `onSend` hook
 * applies to every API route registered after it, and the same first in the root plugins for the
 * form service's /public/v1 routes. Each response of a route (routes hidden from the
 * document skipped, unrouted 404s skipped) is checked against the OpenAPI document the server
 * generates (`swagger()`, read on the first response). Nothing is thrown from the hook: the
 * violations are collected, and the test daemon's `stop()` reports them.
 */
export function createOpenApiCheck(): OpenApiCheck {
  const seen = new Map<string, number>();
  let check: ReturnType<typeof responseChecker> | undefined;
  const state = { checked: 0, bodies: 0 };
  const onSend = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const url = req.routeOptions.url;
    if (url === undefined || req.routeOptions.schema?.hide === true) return payload;
    // reason: @fastify/swagger's document type; the check reads paths and components only
    check ??= responseChecker(req.server.swagger() as unknown as OpenApiDoc);
    const mediaType = String(reply.getHeader('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    // a HEAD twin answers as its GET route, without a body
    const head = req.method === 'HEAD';
    const r = check(head ? 'GET' : req.method, docPath(url), reply.statusCode, mediaType, head ? undefined : body);
    state.checked++;
    if (r.validated) state.bodies++;
    if (r.violation) seen.set(r.violation, (seen.get(r.violation) ?? 0) + 1);
    return payload;
  };
  const plugin = Object.assign(async (app: FastifyInstance) => { app.addHook('onSend', onSend); }, { [Symbol.for('skip-override')]: true });
  // The form service's /public/v1 and its submission endpoint /f/ are root plugins: the same
  // check, from the root, for their routes only.
  const onSendPublic = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) =>
    (/^\/(public\/v1|f)\//.test(req.routeOptions.url ?? '') ? onSend(req, reply, payload) : payload);
  const rootPlugin = Object.assign(async (app: FastifyInstance) => { app.addHook('onSend', onSendPublic); }, { [Symbol.for('skip-override')]: true });
  return {
    part: { name: 'openapi-check', setup: (_core, ext) => { ext.apiPlugins.unshift(plugin); ext.rootPlugins.unshift(rootPlugin); } },
    get checked() { return state.checked; },
    get bodies() { return state.bodies; },
    violations: () => [...seen].map(([v, n]) => (n > 1 ? `${v} (${n} times)` : v)),
  };
}

/** The error `TestDaemon.stop()` throws when responses did not match the document, or undefined. */
export function openApiError(check: OpenApiCheck): Error | undefined {
  const v = check.violations();
  return v.length ? new Error(`responses that do not match the OpenAPI document:\n${v.join('\n')}`) : undefined;
}

/**
 * Checks JSON bodies against an OpenAPI document fetched from a daemon (a spawned process, which
 * the in-process check cannot see): `check(method, docPath, status, body)` returns the violation,
 * or undefined. `docPath` is spelled as in the document (`/api/v1/pools/{id}`).
 */
export function documentChecker(doc: unknown): (method: string, path: string, status: number, body: unknown) => string | undefined {
  // reason: the document as JSON; the check reads paths and components only
  const check = responseChecker(doc as OpenApiDoc);
  return (method, path, status, body) => check(method, path, status, 'application/json', JSON.stringify(body)).violation;
}
