import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { GslbError, forbidden, unauthorized } from '../../../errors.js';
import type { FormCaller, FormScope } from '../../keys/types.js';
import { requireFormAccess, requireScope, type FormAccess } from '../access.js';
import type { FormKeyLookup } from '../key-lookup.js';
import type { RequestLimiter } from '../rate-limit.js';
import { registerPublicErrors } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the scope a /public/v1 route needs (forms-api.md §4) */
    scope?: FormScope;
    /** how a /public/v1 route reaches forms, for single-form keys (runtime/forms/public/access.ts) */
    form?: FormAccess;
  }
}

/** The path prefix of the form service's API (forms-api.md §9). */
export const PUBLIC_PREFIX = '/public/v1';

/** What the /public/v1 server needs: the key lookup, the rate limiter and the route plugins. */
export interface PublicApiDeps {
  keys: FormKeyLookup;
  limiter: RequestLimiter;
  routes: readonly FastifyPluginAsync[];
}

const callers = new WeakMap<FastifyRequest, FormCaller>();

/** The caller of an authenticated /public/v1 request (set by the server's onRequest hook). */
export function callerOf(req: FastifyRequest): FormCaller {
  const caller = callers.get(req);
  if (!caller) throw unauthorized('API key required');
  return caller;
}

/** `Authorization: Bearer <key>` → the key, or undefined. */
function bearerOf(req: FastifyRequest): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m ? m[1] : undefined;
}

/** The form ids a request names: the path `id` and the body's `form_id`. */
function formIdsOf(req: FastifyRequest): (string | undefined)[] {
  const params = req.params as { id?: unknown } | undefined;
  const body = req.body as { form_id?: unknown } | undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return [str(params?.id), body && typeof body === 'object' ? str(body.form_id) : undefined];
}

/**
 * The /public/v1 server, a root plugin (docs/forms.md "The /public/v1 API"). Every route declares
 * `ownAuth` (the /api/v1 auth hook leaves it alone) and a scope. In order, for each routed request:
 * the Bearer key (401 `unauthorized`), the key's rate limit (429 `rate_limited` with Retry-After,
 * counted per key), the route's scope (403; a route without one is refused, so a forgotten
 * declaration fails closed); after the body is parsed (415 when it is not JSON, 413 past
 * `api.bodyLimit`, 400 when it breaks its schema), the single-form restriction (403). A successful
 * answer notes the key's use. Errors are `{name, message}`.
 */
export const publicApi = (deps: PublicApiDeps) => async (root: FastifyInstance): Promise<void> => {
  await root.register(async (app) => {
    registerPublicErrors(app);
    app.addHook('onRequest', async (req, reply) => {
      if (!req.routeOptions.url) return; // the not-found handler answers
      const raw = bearerOf(req);
      const caller = raw === undefined ? undefined : deps.keys.authenticate(raw);
      if (!caller) throw unauthorized(raw === undefined ? 'API key required: send Authorization: Bearer <key>' : 'invalid API key');
      const wait = await deps.limiter.hit(caller.keyId);
      if (wait > 0) {
        reply.header('retry-after', String(wait));
        throw new GslbError('API_RATE_LIMITED', `too many requests for API key "${caller.keyName}"; retry in ${wait} s`);
      }
      const scope = req.routeOptions.config.scope;
      if (!scope) throw forbidden('route has no scope declared');
      requireScope(caller, scope);
      callers.set(req, caller);
    });
    app.addHook('preHandler', async (req) => {
      const caller = callers.get(req);
      if (caller) requireFormAccess(caller, req.routeOptions.config.form, formIdsOf(req));
    });
    app.addHook('onResponse', async (req, reply) => {
      const caller = callers.get(req);
      if (caller && reply.statusCode < 400) deps.keys.touch(caller.keyId);
    });
    for (const routes of deps.routes) await app.register(routes);
  }, { prefix: PUBLIC_PREFIX });
};
