import { timingSafeEqual, createHash } from 'node:crypto';
import type { Principal } from './principal.js';

/** What an authenticator sees of a request. */
export interface AuthRequest {
  cookies: Record<string, string>;
  bearer: string | undefined;
}

/**
 * One step of the authentication chain. Returns a principal, `null` to pass to the next step, or
 * throws a 401 GslbError when the credential is presented but invalid.
 */
export type Authenticator = (req: AuthRequest) => Promise<Principal | null> | Principal | null;

/** Last four characters of a token for audit (`anon` without one). */
export function actorOf(token: string | undefined): string {
  return token ? token.slice(-4) : 'anon';
}

/** Constant-time comparison of two secrets of any length. */
export function secretEquals(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** Step 2 of gslb-config-auth.md §5: Bearer equal to GSLB_API_KEY → system principal. */
export function systemKeyAuthenticator(systemKey: string): Authenticator {
  return (req) => (req.bearer !== undefined && secretEquals(req.bearer, systemKey)
    ? { kind: 'system', tenantId: null, actor: actorOf(req.bearer) }
    : null);
}

/**
 * Runs the chain in order (cookie session, system key, bearer session, tenant API key). In dev mode
 * (no system key configured) every request is a supra-tenant admin. Returns null when nobody
 * vouched for the request.
 */
export async function authenticate(chain: readonly Authenticator[], req: AuthRequest, devMode: boolean): Promise<Principal | null> {
  if (devMode) return { kind: 'dev', tenantId: null, actor: actorOf(req.bearer) };
  for (const step of chain) {
    const p = await step(req);
    if (p) return p;
  }
  return null;
}
