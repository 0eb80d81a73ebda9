import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthServices } from '../services.js';
import type { UserRecord } from '../user-store.js';
import { sessionCookie } from '../cookies.js';
import { GslbError, forbidden, unauthorized } from '../../errors.js';

/** The login response of gslb-config-auth.md §2. */
export interface LoginResponse { token: string; userId: string; role: string; expiresAt: number }

/** The response headers of an answer that starts a session ({@link startSession}), for its schema. */
export const sessionHeaders = {
  'set-cookie': { type: 'string', description: '`gslb_session=<token>; Path=/; HttpOnly; SameSite=Lax`, plus `Secure` over TLS and `Max-Age` when sessions do not slide' },
  'cache-control': { type: 'string', description: '`no-store`' },
} as const;

/**
 * Starts a session for the user, sets the `gslb_session` cookie on the reply, and returns the
 * login response (`expiresAt` in Unix seconds).
 */
export async function startSession(svc: AuthServices, req: FastifyRequest, reply: FastifyReply, user: UserRecord): Promise<LoginResponse> {
  const { token, expiresAt } = await svc.sessions.create(user);
  const maxAge = svc.core.config.auth.sessionExtend ? undefined : Math.floor(svc.ttlMs / 1000);
  reply.header('set-cookie', sessionCookie(req, token, maxAge));
  reply.header('cache-control', 'no-store');
  return { token, userId: user.id, role: user.role, expiresAt: Math.floor(expiresAt / 1000) };
}

/**
 * The signed-in user behind a request. Calls that act on "my account" (TOTP, /auth/me details)
 * need a user session: the system key and tenant keys get 403; a user deleted meanwhile gets 401.
 */
export function requireSessionUser(svc: AuthServices, req: FastifyRequest): UserRecord {
  const p = req.principal;
  if (p.kind !== 'user' || !p.userId) throw forbidden('this call needs a signed-in user session');
  const u = svc.users.byId(p.userId);
  if (!u) throw unauthorized('invalid or expired credentials');
  return u;
}

/**
 * Opens a sealed TOTP secret with this node's GSLB_SECRET_KEY. User rows are replicated, so a node
 * may hold a TOTP user although its key is unset or differs from the node that sealed the secret
 * (every node of a cluster needs the same key): that is a server fault (500 with a message
 * saying what to fix), not a wrong code.
 */
export function openTotpSecret(svc: AuthServices, sealed: string): string {
  if (!svc.box) throw new GslbError('API_INTERNAL', 'TOTP cannot be checked on this node: GSLB_SECRET_KEY is not set');
  try {
    return svc.box.open(sealed, 'totp');
  } catch (err) {
    throw new GslbError('API_INTERNAL', 'TOTP cannot be checked on this node: GSLB_SECRET_KEY differs from the key the secret was sealed with', { cause: err });
  }
}
