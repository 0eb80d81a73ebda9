import type { FastifyInstance } from 'fastify';
import { PARTS } from '../parts.js';
import { createAuthServices } from './services.js';
import { bearerSessionAuthenticator, cookieSessionAuthenticator, tenantKeyAuthenticator } from './authenticators.js';
import { discoverOidc } from './oidc.js';
import { authSessionRoutes } from '../api/routes/auth-session.js';
import { authTotpRoutes } from '../api/routes/auth-totp.js';
import { authOidcRoutes } from '../api/routes/auth-oidc.js';
import { authResetRoutes } from '../api/routes/auth-reset.js';
import { tenantRoutes } from '../api/routes/auth-tenants.js';
import { userRoutes } from '../api/routes/users.js';
import { loginUiPlugin } from '../ui/login/plugin.js';

/**
 * The auth part (issue #6): users, tenants, sessions, TOTP, single sign-on, password reset and
 * the sign-in page. Setup refuses to start when TOTP users exist without GSLB_SECRET_KEY, and
 * fetches the OpenID configuration when single sign-on is on (a failure stops the start).
 */
PARTS.push({
  name: 'auth',
  async setup(core, ext) {
    const svc = createAuthServices(core);
    // gslb-config-auth.md §5.2 order: cookie (step 'cookie' runs first), system key (added by the
    // API), bearer session, legacy tenant key
    ext.authenticators.push(cookieSessionAuthenticator(svc.sessions), bearerSessionAuthenticator(svc.sessions), tenantKeyAuthenticator(svc.tenants));
    if (core.config.auth.oidc.enabled) {
      svc.oidc = await discoverOidc(core.config.auth.oidc, () => core.nonces);
      core.log.info({ issuer: core.config.auth.oidc.discoveryUrl }, 'single sign-on discovery done');
    }
    for (const p of [authSessionRoutes, authTotpRoutes, authOidcRoutes, authResetRoutes, userRoutes, tenantRoutes]) ext.apiPlugins.push(p(svc));
    ext.rootPlugins.push(loginUiPlugin, async (app: FastifyInstance) => {
      // the single-sign-on callback lands on `/` (§4); until the dashboard owns `/`, go to the account page
      if (!app.hasRoute({ method: 'GET', url: '/' })) {
        app.get('/', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => reply.redirect('/ui/account', 302));
      }
    });
  },
});
