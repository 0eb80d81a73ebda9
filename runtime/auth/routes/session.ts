import type { FastifyInstance } from 'fastify';
import type { AuthServices } from '../services.js';
import { publicUser } from '../user-store.js';
import { checkEmail, checkPasswordRules, hashPassword, verifyPassword } from '../passwords.js';
import { matchTotp } from '../totp.js';
import { clearedCookie } from '../cookies.js';
import { PERMISSIONS, permissionsOf } from '../../ports/permissions.js';
import { DEFAULT_TENANT } from '../../../core/model/types.js';
import { GslbError, notFound, unauthorized } from '../../errors.js';
import { apiRef, errorResponses, publicErrorResponses, ref } from '../../api/schemas.js';
import { openTotpSecret, requireSessionUser, sessionHeaders, startSession } from './common.js';
import type { LoginBody, SetupBody } from './types.js';

const tags = ['auth'];
const auth = (name: string) => apiRef('auth', name);

const mfa = (msg: string) => new GslbError('API_UNAUTHORIZED', msg, { extra: { mfaRequired: true } });

/**
 * /auth/setup, /auth/login, /auth/logout, /auth/me and /auth/sso (gslb-config-auth.md §4).
 * Wrong credentials: 401 `{error}`; TOTP missing or wrong: 401 `{error, mfaRequired: true}`;
 * too many failures: 429 with Retry-After (see docs/auth.md).
 */
export function authSessionRoutes(svc: AuthServices) {
  const operatorTenant = svc.core.config.tenancy.operatorTenant;
  return async (app: FastifyInstance) => {
    app.post<{ Body: SetupBody }>('/auth/setup', {
      config: { public: true },
      schema: {
        operationId: 'setupFirstUser', summary: 'Create the first user (a tenant_admin) while no user exists', tags, body: auth('SetupRequest'),
        response: { 201: { description: 'the new user', ...auth('User') }, ...publicErrorResponses(400, 404) },
      },
    }, async (req, reply) => {
      // 404, not 403: once set up, the endpoint does not exist (§7)
      if (!svc.core.config.auth.setupEndpoint || svc.users.count() > 0) throw notFound('setup is not available');
      const email = checkEmail(req.body.email);
      const hash = await hashPassword(checkPasswordRules(req.body.password), svc.bcryptCost);
      const user = svc.users.createFirst({ tenantId: DEFAULT_TENANT, email, displayName: req.body.displayName ?? '', role: 'tenant_admin', passwordHash: hash });
      if (!user) throw notFound('setup is not available');
      req.log.info({ userId: user.id }, 'first user created by setup');
      return reply.status(201).send(publicUser(user));
    });

    app.post<{ Body: LoginBody }>('/auth/login', {
      config: { public: true },
      schema: {
        operationId: 'login', summary: 'Sign in with e-mail, password and (when enrolled) a TOTP code', tags, body: auth('LoginRequest'),
        response: {
          200: { description: 'signed in; the session cookie is set', headers: sessionHeaders, ...auth('Session') },
          ...publicErrorResponses(400),
          401: { description: 'wrong e-mail or password; with `mfaRequired: true` a TOTP code is missing, wrong or already used', ...auth('LoginError') },
          429: { description: 'too many failed sign-ins for this e-mail or source; retry after the given seconds', headers: { 'retry-after': { type: 'integer', description: 'seconds' } }, ...ref('Error') },
          ...publicErrorResponses(500),
        },
      },
    }, async (req, reply) => {
      const { email, password, totpCode } = req.body;
      const source = req.ip;
      const wait = await svc.limiter.retryAfterMs(email, source);
      if (wait > 0) {
        const sec = Math.ceil(wait / 1000);
        reply.header('retry-after', String(sec));
        throw new GslbError('API_RATE_LIMITED', `too many failed sign-in attempts; try again in ${sec} s`);
      }
      const user = svc.users.byEmail(email);
      const usable = user && user.authProvider === 'password' ? user.passwordHash : null;
      if (!(await verifyPassword(password, usable, svc.bcryptCost)) || !user) {
        await svc.limiter.fail(email, source);
        throw unauthorized('invalid email or password');
      }
      if (user.totpSecret) {
        if (!totpCode) throw mfa('a TOTP code is required');
        const step = matchTotp(openTotpSecret(svc, user.totpSecret), totpCode.trim());
        if (step === undefined) { await svc.limiter.fail(email, source); throw mfa('invalid TOTP code'); }
        // a code is good once: refuse it again within its step (and refuse older steps)
        if (!svc.users.useTotpStep(user.id, step)) { await svc.limiter.fail(email, source); throw mfa('this TOTP code was already used; wait for the next one'); }
      }
      await svc.limiter.succeed(email, source);
      req.log.info({ userId: user.id }, 'signed in');
      return startSession(svc, req, reply, user);
    });

    app.post('/auth/logout', {
      config: { authenticated: true },
      schema: {
        operationId: 'logout', summary: 'Revoke the current session on every node', tags,
        response: { 204: { description: 'signed out; the session cookie is cleared', type: 'null', headers: { 'set-cookie': { type: 'string', description: 'the cleared `gslb_session` cookie (`Max-Age=0`)' } } }, ...errorResponses() },
      },
    }, async (req, reply) => {
      if (req.principal.sessionToken) await svc.sessions.revoke(req.principal.sessionToken);
      reply.header('set-cookie', clearedCookie(req));
      return reply.status(204).send();
    });

    app.get('/auth/me', {
      config: { authenticated: true },
      schema: { operationId: 'getCurrentPrincipal', summary: 'Who the caller is and what it may do', tags, response: { 200: { description: 'the caller', ...auth('Me') }, ...errorResponses() } },
    }, async (req) => {
      const p = req.principal;
      if (p.kind === 'user') {
        const u = requireSessionUser(svc, req);
        return { kind: 'user', ...publicUser(u), permissions: permissionsOf(u.role, u.tenantId, operatorTenant) };
      }
      const perms = p.kind === 'system' || p.kind === 'dev' ? PERMISSIONS : p.role && p.tenantId !== null ? permissionsOf(p.role, p.tenantId, operatorTenant) : [];
      return { kind: p.kind, userId: null, role: p.role ?? null, tenantId: p.tenantId, permissions: perms };
    });

    app.get('/auth/sso', {
      config: { public: true },
      schema: { operationId: 'getSingleSignOn', summary: 'Whether single sign-on is enabled', tags, response: { 200: { description: 'single sign-on', ...auth('SsoInfo') } } },
    }, async () => ({
      enabled: svc.oidc !== undefined,
      ...(svc.oidc ? { authorizeUrl: '/api/v1/auth/oidc/authorize' } : {}),
    }));
  };
}
