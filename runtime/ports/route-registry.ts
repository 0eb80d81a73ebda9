import type { FastifyInstance } from 'fastify';
import type { Permission } from './permissions.js';

/** One registered route and its access declaration. */
export interface RouteAccess {
  method: string;
  url: string;
  permission: Permission | undefined;
  public: boolean;
  authenticated: boolean;
  /** the route's plugin authenticates requests itself (`ownAuth`) */
  ownAuth: boolean;
}

/**
 * Records every route registered after this call (all of /api/v1 and the root plugins) with its
 * declared access, so tests can walk the real route table (the permission matrix) and nothing
 * added later escapes it. HEAD twins of GET routes are skipped.
 */
export function collectRoutes(app: FastifyInstance): RouteAccess[] {
  const out: RouteAccess[] = [];
  app.addHook('onRoute', (r) => {
    const cfg = (r.config ?? {}) as { permission?: Permission; public?: boolean; authenticated?: boolean; ownAuth?: boolean };
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) {
      if (m === 'HEAD') continue;
      out.push({ method: m, url: r.url, permission: cfg.permission, public: cfg.public === true, authenticated: cfg.authenticated === true, ownAuth: cfg.ownAuth === true });
    }
  });
  return out;
}
