import type { FastifyInstance } from 'fastify';
import type { AuthServices } from '../services.js';
import { domainAllowed, resolveRole } from '../role-claim.js';
import { DEFAULT_TENANT } from '../../model/types.js';
import { badRequest, forbidden, notFound } from '../../errors.js';
import { startSession } from './common.js';

/**
 * Single sign-on (gslb-config-auth.md §5.7). 404 when single sign-on is off. The callback refuses a
 * missing, replayed or expired state with 400, an e-mail outside allowedDomains (or one the
 * provider marks unverified) with 403; it finds the user by e-mail or creates one with
 * `auth_provider: oidc` and the mapped role, sets the session cookie and redirects to `/`.
 */
export function authOidcRoutes(svc: AuthServices) {
  return async (app: FastifyInstance) => {
    app.get('/auth/oidc/authorize', { config: { public: true }, schema: { tags: ['auth'] } }, async (_req, reply) => {
      if (!svc.oidc) throw notFound('single sign-on is not enabled');
      const url = await svc.oidc.authorizationUrl();
      return reply.header('cache-control', 'no-store').redirect(url.href, 302);
    });

    app.get<{ Querystring: Record<string, string> }>('/auth/oidc/callback', { config: { public: true }, schema: { tags: ['auth'] } }, async (req, reply) => {
      if (!svc.oidc) throw notFound('single sign-on is not enabled');
      if (req.query.error) throw badRequest(`single sign-on failed at the provider: ${String(req.query.error).slice(0, 100)}`);
      const claims = await svc.oidc.complete(req.query);
      const o = svc.core.config.auth.oidc;
      const email = typeof claims.email === 'string' ? claims.email.trim() : '';
      if (!email) throw forbidden('the identity provider did not return an e-mail address');
      if (claims.email_verified === false) throw forbidden('the e-mail address is not verified at the identity provider');
      if (!domainAllowed(email, o.allowedDomains)) throw forbidden(`e-mail domain of ${email} is not allowed`);
      let user = svc.users.byEmail(email);
      if (!user) {
        const role = resolveRole(claims, o.roleClaim, o.roleMapping, o.defaultRole);
        const name = typeof claims.name === 'string' ? claims.name : '';
        user = svc.users.create({ tenantId: DEFAULT_TENANT, email, displayName: name, role, passwordHash: null, authProvider: 'oidc' });
        req.log.info({ userId: user.id, role }, 'single sign-on user created');
      }
      await startSession(svc, req, reply, user);
      req.log.info({ userId: user.id }, 'signed in with single sign-on');
      return reply.redirect('/', 302);
    });
  };
}
