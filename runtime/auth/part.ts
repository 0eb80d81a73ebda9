import { PARTS } from '../parts.js';
import { createAuthServices } from './services.js';
import { bearerSessionAuthenticator, cookieSessionAuthenticator, tenantKeyAuthenticator } from './authenticators.js';
import { discoverOidc } from './oidc.js';
import { authSessionRoutes } from './routes/session.js';
import { authTotpRoutes } from './routes/totp.js';
import { authOidcRoutes } from './routes/oidc.js';
import { authResetRoutes } from './routes/reset.js';
import { tenantRoutes } from './routes/tenants.js';
import { userRoutes } from './routes/users.js';
import { loginUiPlugin, rootRedirectPlugin } from './routes/login-ui.js';

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
    ext.rootPlugins.push(loginUiPlugin, rootRedirectPlugin);
  },
});
