import type { FastifyRequest } from 'fastify';

/** The session cookie's name (gslb-config-auth.md §2). */
export const SESSION_COOKIE = 'gslb_session';

/**
 * True when the client reached us over TLS. `req.protocol` honours X-Forwarded-Proto only from
 * `api.trustedProxies` (fastify trustProxy), so an untrusted client cannot force or drop Secure.
 */
export function overTls(req: FastifyRequest): boolean {
  return req.protocol === 'https';
}

/**
 * The Set-Cookie value for a session: HttpOnly, SameSite=Lax, Path=/, Secure over TLS. With a
 * sliding session it is a browser-session cookie (the server enforces expiry); otherwise Max-Age
 * equals the session lifetime.
 */
export function sessionCookie(req: FastifyRequest, token: string, maxAgeSec: number | undefined): string {
  const parts = [`${SESSION_COOKIE}=${token}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (maxAgeSec !== undefined) parts.push(`Max-Age=${maxAgeSec}`);
  if (overTls(req)) parts.push('Secure');
  return parts.join('; ');
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedCookie(req: FastifyRequest): string {
  return [`${SESSION_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=0', ...(overTls(req) ? ['Secure'] : [])].join('; ');
}
