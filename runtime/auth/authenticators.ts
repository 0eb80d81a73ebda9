import { actorOf, type Authenticator } from '../ports/authenticate.js';
import type { SessionService } from './sessions.js';
import type { TenantStore } from './tenant-store.js';
import type { Principal } from '../ports/principal.js';
import { SESSION_COOKIE } from './cookies.js';

async function sessionPrincipal(sessions: SessionService, token: string): Promise<Principal | null> {
  const s = await sessions.resolve(token);
  if (!s) return null;
  return { kind: 'user', tenantId: s.user.tenantId, role: s.user.role, userId: s.user.id, actor: actorOf(token), sessionToken: token };
}

/**
 * Step 1 of gslb-config-auth.md §5: the `gslb_session` cookie. An unknown or expired cookie
 * passes to the next step (a stale cookie must not hide a valid Bearer). Marked `step: 'cookie'`
 * so the API runs it before the system key.
 */
export function cookieSessionAuthenticator(sessions: SessionService): Authenticator {
  const a: Authenticator & { step?: string } = async (req) => {
    const token = req.cookies[SESSION_COOKIE];
    return token ? sessionPrincipal(sessions, token) : null;
  };
  a.step = 'cookie';
  return a;
}

/** Step 3: `Authorization: Bearer <session token>`. */
export function bearerSessionAuthenticator(sessions: SessionService): Authenticator {
  return async (req) => (req.bearer ? sessionPrincipal(sessions, req.bearer) : null);
}

/**
 * Step 4: the legacy per-tenant API key. It acts as the tenant's `tenant_admin` (it was the
 * tenant's full credential before roles existed) and stays inside its tenant.
 */
export function tenantKeyAuthenticator(tenants: TenantStore): Authenticator {
  return (req) => {
    if (!req.bearer) return null;
    const tenantId = tenants.tenantOfKey(req.bearer);
    return tenantId ? { kind: 'apikey', tenantId, role: 'tenant_admin', actor: actorOf(req.bearer) } : null;
  };
}
