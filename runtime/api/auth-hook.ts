import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf, authenticate, type Authenticator } from '../ports/authenticate.js';
import { principalAllows, type Principal } from '../ports/principal.js';
import type { Permission } from '../ports/permissions.js';
import { forbidden, unauthorized } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest { principal: Principal }
  interface FastifyContextConfig {
    /** permission the route needs; routes without one must set `public: true` */
    permission?: Permission;
    /** no authentication at all */
    public?: boolean;
    /** authenticated, but any role may call it */
    authenticated?: boolean;
    /**
     * the route's own plugin authenticates every request (the form service's /public/v1 API keys,
     * runtime/forms): this hook neither looks for a user or session nor lets one through
     */
    ownAuth?: boolean;
  }
}

/** Parses a Cookie header into a map (no dependency needed for this one header). */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    try { out[k] = decodeURIComponent(v); } catch { out[k] = v; }
  }
  return out;
}

function bearerOf(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(h);
  return m ? m[1]!.trim() : undefined;
}

/**
 * Authenticates every request in gslb-config-auth.md §5 order and enforces the route's
 * permission: 401 without valid credentials, 403 when the principal lacks the permission. A route
 * with neither `permission`, `authenticated`, `public` nor `ownAuth` is refused, so a forgotten declaration
 * fails closed.
 */
export function registerAuth(app: FastifyInstance, chain: () => readonly Authenticator[], devMode: () => boolean, operatorTenant: string): void {
  app.decorateRequest('principal', null as unknown as Principal); // reason: fastify's placeholder value; the hook below sets it first
  app.addHook('onRequest', async (req) => {
    const cfg = req.routeOptions.config ?? {};
    const bearer = bearerOf(req);
    if (cfg.ownAuth) {
      req.principal = { kind: 'anon', tenantId: null, actor: actorOf(bearer) };
      return;
    }
    if (cfg.public) {
      // a public route may look at who is calling, but never requires it
      const p = await authenticate(chain(), { cookies: parseCookies(req.headers.cookie), bearer }, devMode()).catch(() => null);
      req.principal = p ?? { kind: 'anon', tenantId: null, actor: actorOf(bearer) };
      return;
    }
    if (!req.routeOptions.url) return; // 404 handler
    const p = await authenticate(chain(), { cookies: parseCookies(req.headers.cookie), bearer }, devMode());
    if (!p) {
      // the audit entry still names the presented token's last four characters (§6)
      req.principal = { kind: 'anon', tenantId: null, actor: actorOf(bearer) };
      throw unauthorized(bearer ? 'invalid or expired credentials' : 'authentication required');
    }
    req.principal = p;
    if (cfg.permission) {
      if (!principalAllows(p, cfg.permission, operatorTenant)) throw forbidden(`permission ${cfg.permission} required`);
    } else if (!cfg.authenticated) {
      throw forbidden('route has no permission declared');
    }
  });
}
