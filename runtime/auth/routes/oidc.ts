import type { FastifyInstance } from 'fastify';
import type { AuthServices } from '../services.js';
import { domainAllowed, resolveRole } from '../role-claim.js';
import { DEFAULT_TENANT } from '../../../core/model/types.js';
import { badRequest, forbidden, notFound } from '../../errors.js';
import { apiRef, publicErrorResponses } from '../../api/schemas.js';
import { sessionHeaders, startSession } from './common.js';
import type { OidcCallbackQuery } from './types.js';

const tags = ['auth'];

/**
 * Single sign-on (gslb-config-auth.md §5.7). 404 when single sign-on is off. The callback refuses a
 * missing, replayed or expired state with 400, an e-mail outside allowedDomains (or one the
 * provider marks unverified) with 403; it finds the user by e-mail or creates one with
 * `auth_provider: oidc` and the mapped role, sets the session cookie and redirects to `/`.
 */
export function authOidcRoutes(svc: AuthServices) {
  return async (app: FastifyInstance) => {
    app.get('/auth/oidc/authorize', {
      config: { public: true },
      schema: {
        operationId: 'startSingleSignOn', summary: 'Redirect to the identity provider with a single-use state', tags,
        response: {
          302: { description: "to the provider's authorization endpoint; the state is good for 10 minutes", type: 'null', headers: { location: { type: 'string', description: 'the authorization URL' }, 'cache-control': { type: 'string', description: '`no-store`' } } },
          ...publicErrorResponses(404),
        },
      },
    }, async (_req, reply) => {
      if (!svc.oidc) throw notFound('single sign-on is not enabled');
      const url = await svc.oidc.authorizationUrl();
      return reply.header('cache-control', 'no-store').redirect(url.href, 302);
    });

    app.get<{ Querystring: OidcCallbackQuery }>('/auth/oidc/callback', {
      config: { public: true },
      schema: {
        operationId: 'completeSingleSignOn', summary: 'The redirect URI: sign in (or create) the user and go to /', tags, querystring: apiRef('auth', 'OidcCallbackQuery'),
        response: {
          302: { description: 'signed in; the session cookie is set and the browser goes to `/`', type: 'null', headers: { location: { type: 'string', description: '`/`' }, ...sessionHeaders } },
          // 400: the provider reported an error, or a missing, used or expired state, or a failed code exchange
          // 403: no e-mail, an unverified one, or a domain outside allowedDomains
          ...publicErrorResponses(400, 403, 404),
        },
      },
    }, async (req, reply) => {
      if (!svc.oidc) throw notFound('single sign-on is not enabled');
      if (req.query.error) throw badRequest(`single sign-on failed at the provider: ${req.query.error.slice(0, 100)}`);
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
        user = await svc.users.createReserved({ tenantId: DEFAULT_TENANT, email, displayName: name, role, passwordHash: null, authProvider: 'oidc' });
        req.log.info({ userId: user.id, role }, 'single sign-on user created');
      }
      await startSession(svc, req, reply, user);
      req.log.info({ userId: user.id }, 'signed in with single sign-on');
      return reply.redirect('/', 302);
    });
  };
}
