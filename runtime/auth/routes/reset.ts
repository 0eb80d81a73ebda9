import type { FastifyInstance } from 'fastify';
import type { AuthServices } from '../services.js';
import { checkPasswordRules, hashPassword } from '../passwords.js';
import { badRequest } from '../../errors.js';
import { sendPasswordReset } from '../../mail/port.js';
import { apiRef, noContent, publicErrorResponses } from '../../api/schemas.js';
import type { PasswordResetBody, PasswordResetConfirmBody } from './types.js';

const tags = ['auth'];

/** The message of the 503 answered while `api.publicURL` is unset. */
export const NO_PUBLIC_URL = 'password reset is not available: api.publicURL is not set';

/**
 * The origin of links in mail: `api.publicURL`, or undefined when it is unset. Never the request's
 * Host header, which a caller can forge to send a victim a link to another site.
 */
function publicOrigin(svc: AuthServices): string | undefined {
  const u = svc.core.config.api.publicURL;
  return u ? new URL(u).origin : undefined;
}

/**
 * Password reset by e-mailed single-use token (endpoints are a decision of docs/auth.md).
 * `POST /auth/password-reset` `{email}` always answers 202 (no account enumeration) unless
 * `api.publicURL` is unset or the server-wide mail is not configured (503 for every address, before
 * any lookup); mail goes out in the background through core.mail, the link is
 * `<publicURL origin>/ui/login?reset=<token>`. `POST /auth/password-reset/confirm`
 * `{token, password}` sets the password, revokes the user's sessions and answers 204; an unknown,
 * used or expired token gets 400. The token is never logged.
 */
export function authResetRoutes(svc: AuthServices) {
  return async (app: FastifyInstance) => {
    app.post<{ Body: PasswordResetBody }>('/auth/password-reset', {
      config: { public: true },
      schema: {
        operationId: 'requestPasswordReset', summary: 'Mail a single-use reset link, if the account exists', tags, body: apiRef('auth', 'PasswordResetRequest'),
        response: {
          202: { description: 'accepted, whether or not the account exists', ...apiRef('auth', 'PasswordResetAccepted') },
          // 503: api.publicURL is not set, or the server-wide mail is not configured
          ...publicErrorResponses(400, 503),
        },
      },
    }, async (req, reply) => {
      const origin = publicOrigin(svc);
      if (!origin) {
        req.log.warn({ reason: 'api.publicURL is not set' }, 'password reset refused');
        return reply.status(503).send({ error: NO_PUBLIC_URL });
      }
      if (!svc.core.mail.configured()) return reply.status(503).send({ error: 'password reset is unavailable: mail is not configured' });
      const user = svc.users.byEmail(req.body.email);
      if (user && user.authProvider === 'password') {
        const token = await svc.resets.issue(user.id);
        const link = `${origin}/ui/login?reset=${encodeURIComponent(token)}`;
        const log = req.log;
        // rendered from the operator-overridable `password-reset` template (docs/alerts.md)
        sendPasswordReset(svc.core, user.email, link, { displayName: user.displayName, expiresInMinutes: 30 }).then(() => log.info({ userId: user.id }, 'password reset mail sent'),
          (err: Error) => log.warn({ userId: user.id, err: { message: err.message } }, 'password reset mail failed'));
      }
      return reply.status(202).send({ status: 'if the account exists, a reset link was sent' });
    });

    app.post<{ Body: PasswordResetConfirmBody }>('/auth/password-reset/confirm', {
      config: { public: true },
      schema: {
        operationId: 'confirmPasswordReset', summary: "Set a new password with the mailed token; the user's sessions are revoked", tags, body: apiRef('auth', 'PasswordResetConfirm'),
        // 400: a password outside the rules, or an unknown, used or expired token
        response: { ...noContent('the password is set'), ...publicErrorResponses(400) },
      },
    }, async (req, reply) => {
      const password = checkPasswordRules(req.body.password);
      const userId = await svc.resets.consume(req.body.token);
      const user = userId ? svc.users.byId(userId) : undefined;
      if (!user) throw badRequest('invalid, used or expired reset token');
      svc.users.update(user.id, { passwordHash: await hashPassword(password, svc.bcryptCost) });
      await svc.sessions.revokeUser(user.id);
      req.log.info({ userId: user.id }, 'password reset');
      return reply.status(204).send();
    });
  };
}
