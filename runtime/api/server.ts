import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifySchema, type RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import type { Core } from '../app.js';
import { addProjectFormats } from '../config/ajv.js';
import { parseCidr, parseIp, cidrContains } from '../net/ip.js';
import { answerFrameworkError, registerErrorHandling, type ErrorShape } from './errors.js';
import { parseJsonBody } from './json-body.js';
import { indexRouteMethods } from './methods.js';
import { badRequest } from '../errors.js';
import { registerAuth } from './auth-hook.js';
import { createAuditSink, registerAudit } from './audit.js';
import { systemKeyAuthenticator, type Authenticator } from '../ports/authenticate.js';
import { collectRoutes, type RouteAccess } from '../ports/route-registry.js';
import { apiSchemas, componentName, PARAM_MAX_LENGTH, publicErrorResponses, resourceSchema } from './schemas.js';
import { finishDocument } from './openapi-document.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the real route table with each route's access declaration (the permission-matrix test walks it) */
    routes?: RouteAccess[];
  }
}

/** Extension points that later parts (auth, ws, gitops, forms…) fill before the server starts. */
export interface ApiExtensions {
  /** authenticators run after the cookie step, in order; the system key step is added here */
  authenticators: Authenticator[];
  /** plugins registered under /api/v1 */
  apiPlugins: ((app: FastifyInstance) => Promise<void>)[];
  /** plugins registered at the root (e.g. /ui, /rum.js, /public/v1) */
  rootPlugins: ((app: FastifyInstance) => Promise<void>)[];
  /** path prefixes whose errors are not `{error}` (the form service's /public/v1), for errors raised before routing */
  errorShapes: ErrorShape[];
}

export function createExtensions(): ApiExtensions {
  return { authenticators: [], apiPlugins: [], rootPlugins: [], errorShapes: [] };
}

/** Fastify's trustProxy callback from `api.trustedProxies` CIDRs. */
function trustFrom(cidrs: string[]): ((addr: string) => boolean) | false {
  const parsed = cidrs.map(parseCidr).filter((c) => c !== undefined);
  if (parsed.length === 0) return false;
  return (addr: string) => {
    const ip = parseIp(addr);
    return ip !== undefined && parsed.some((c) => cidrContains(c, ip));
  };
}

/**
 * JSON bodies (runtime/api/json-body.ts: malformed JSON and prototype-poisoning keys are 400s that
 * say which), except that an empty body on a route that declares no body schema (DELETE, most
 * POSTs without input) is no body: clients that always send `Content-Type: application/json` must
 * not get 400 for sending nothing. A route with a body schema still answers an empty body with 400.
 */
function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (text.length === 0) {
      if (req.routeOptions.schema?.body === undefined) done(null, undefined);
      else done(badRequest('request body is empty; send a JSON object'), undefined);
      return;
    }
    const parsed = parseJsonBody(text);
    if ('error' in parsed) done(parsed.error, undefined);
    else done(null, parsed.value);
  });
}

/** The OpenAPI component of a shared schema ({@link componentName}); inline schemas keep @fastify/swagger's `def-N`. */
function localReference(json: { $id?: unknown }, _base: unknown, _fragment: unknown, i: number): string {
  return typeof json.$id === 'string' ? componentName(json.$id) : `def-${i}`;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * What every operation has without its route saying so: a public route needs no credentials (an
 * empty security list), and a documented route that takes a body can answer 413 (too large) and
 * 415 (not JSON), which the server answers before any handler. A route's `config.documentBody`
 * is its request body in the document only.
 */
function documentGlobals(schema: FastifySchema, route: RouteOptions): FastifySchema {
  const out = { ...schema };
  const config = route.config as { public?: boolean; documentBody?: unknown } | undefined;
  if (config?.public) out.security = [];
  // a route that reads its own body (the form endpoint streams multipart files) documents it here, unvalidated by fastify
  if (config?.documentBody !== undefined) out.body = config.documentBody;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (out.response && methods.some((m) => BODY_METHODS.has(m))) {
    // a body with its own media types (the git webhook takes any) has no 415; the JSON-only API does
    const ownMediaTypes = typeof out.body === 'object' && out.body !== null && 'content' in out.body;
    out.response = { ...(ownMediaTypes ? publicErrorResponses(413) : publicErrorResponses(413, 415)), ...(out.response as object) };
  }
  return out;
}

/**
 * Builds the API server: /api/v1 with every part's plugins, the auth hook, audit, one error shape,
 * and the OpenAPI document generated from the same schemas that validate requests.
 */
export async function buildApi(core: Core, ext: ApiExtensions = createExtensions()): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: core.log.child({ component: 'api' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: core.config.api.bodyLimit,
    trustProxy: trustFrom(core.config.api.trustedProxies),
    // the router matches a path parameter as long as the longest any schema allows (every `{id}`:
    // maxLength 200), so a valid id always reaches authentication and its schema; a longer one
    // is answered by answerFrameworkError in the API's error shape
    routerOptions: { maxParamLength: PARAM_MAX_LENGTH },
    frameworkErrors: answerFrameworkError(() => ext.errorShapes),
    ajv: {
      // verbose: errors keep the failing value, so a message can quote it (a scope id)
      customOptions: { allErrors: true, coerceTypes: false, removeAdditional: false, useDefaults: false, strict: false, verbose: true },
      plugins: [addProjectFormats as never],
    },
  });
  registerErrorHandling(app);
  indexRouteMethods(app);
  // The API speaks JSON only: other bodies get 415 instead of being parsed as strings.
  app.removeContentTypeParser('text/plain');
  registerJsonParser(app);
  const chain: Authenticator[] = [];
  registerAuth(app, () => chain, () => core.systemKey === undefined, core.config.tenancy.operatorTenant);
  registerAudit(app, createAuditSink(core.env.GSLB_AUDIT_LOG, core.log));
  // A write is answered once every DNS worker thread serves it (docs/dns.md "Workers"): a client
  // that queries DNS right after its write returns gets the new data from whichever thread answers.
  app.addHook('onSend', async () => { await core.ports.applySettled?.(); });
  // A large apply holds the write gate while it writes in slices (docs/architecture.md "Large
  // applies"): a write waits for it, so it is applied after it, never inside its transaction.
  app.addHook('preHandler', async (req) => { if (BODY_METHODS.has(req.method)) await core.applyGate.idle(); });
  // the real route table with each route's access declaration (the permission-matrix test walks it)
  core.ports.routes = collectRoutes(app);
  app.addSchema(resourceSchema);
  for (const doc of apiSchemas) app.addSchema(doc);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'gslbd API', version: '1', description: 'The REST API of gslbd under /api/v1 (docs/api.md). Errors are `{error}` bodies.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, cookie: { type: 'apiKey', in: 'cookie', name: 'gslb_session' } } },
      security: [{ bearer: [] }, { cookie: [] }],
    },
    refResolver: { buildLocalReference: localReference },
    transform: ({ schema, url, route }) => ({ schema: documentGlobals(schema, route), url }),
    transformObject: (documents) => finishDocument('openapiObject' in documents ? documents.openapiObject : documents.swaggerObject),
  });
  await app.register(async (api) => {
    for (const p of ext.apiPlugins) await api.register(p);
    api.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  }, { prefix: '/api/v1' });
  for (const p of ext.rootPlugins) await app.register(p);
  // The chain is filled after plugins had a chance to add their steps: cookie session first
  // (added by the auth part), then system key, then the others, as gslb-config-auth.md §5 orders.
  const cookieSteps = ext.authenticators.filter((a) => (a as { step?: string }).step === 'cookie');
  const others = ext.authenticators.filter((a) => (a as { step?: string }).step !== 'cookie');
  chain.push(...cookieSteps);
  if (core.systemKey) chain.push(systemKeyAuthenticator(core.systemKey));
  chain.push(...others);
  return app;
}
