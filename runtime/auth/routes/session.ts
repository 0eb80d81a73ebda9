import type { FastifyInstance } from 'fastify';
import type { AuthServices } from '../services.js';
import { publicUser } from '../user-store.js';
import { checkEmail, checkPasswordRules, hashPassword, verifyPassword } from '../passwords.js';
import { matchTotp } from '../totp.js';
import { clearedCookie } from '../cookies.js';
import { PERMISSIONS, permissionsOf } from '../permissions.js';
import { DEFAULT_TENANT } from '../../model/types.js';
import { GslbError, notFound, unauthorized } from '../../errors.js';
import { openTotpSecret, requireSessionUser, startSession } from './common.js';

const loginBody = {
  type: 'object',
  properties: { email: { type: 'string', maxLength: 254 }, password: { type: 'string', maxLength: 1024 }, totpCode: { type: 'string', maxLength: 16 } },
  required: ['email', 'password'],
} as const;
const setupBody = {
  type: 'object',
  properties: { email: { type: 'string' }, password: { type: 'string' }, displayName: { type: 'string', maxLength: 200, format: 'printable' } },
  required: ['email', 'password'],
} as const;

const mfa = (msg: string) => new GslbError('API_UNAUTHORIZED', msg, { extra: { mfaRequired: true } });

/**
 * /auth/setup, /auth/login, /auth/logout, /auth/me and /auth/sso (gslb-config-auth.md §4).
 * Wrong credentials: 401 `{error}`; TOTP missing or wrong: 401 `{error, mfaRequired: true}`;
 * too many failures: 429 with Retry-After (see docs/auth.md).
 */
export function authSessionRoutes(svc: AuthServices) {
  const operatorTenant = svc.core.config.tenancy.operatorTenant;
  return async (app: FastifyInstance) => {
    app.post<{ Body: { email: string; password: string; displayName?: string } }>('/auth/setup',
      { config: { public: true }, schema: { tags: ['auth'], body: setupBody } }, async (req, reply) => {
        // 404, not 403: once set up, the endpoint does not exist (§7)
        if (!svc.core.config.auth.setupEndpoint || svc.users.count() > 0) throw notFound('setup is not available');
        const email = checkEmail(req.body.email);
        const hash = await hashPassword(checkPasswordRules(req.body.password), svc.bcryptCost);
        const user = svc.users.createFirst({ tenantId: DEFAULT_TENANT, email, displayName: req.body.displayName ?? '', role: 'tenant_admin', passwordHash: hash });
        if (!user) throw notFound('setup is not available');
        req.log.info({ userId: user.id }, 'first user created by setup');
        return reply.status(201).send(publicUser(user));
      });

    app.post<{ Body: { email: string; password: string; totpCode?: string } }>('/auth/login',
      { config: { public: true }, schema: { tags: ['auth'], body: loginBody } }, async (req, reply) => {
        const { email, password, totpCode } = req.body;
        const source = req.ip;
        const wait = svc.limiter.retryAfterMs(email, source);
        if (wait > 0) {
          const sec = Math.ceil(wait / 1000);
          reply.header('retry-after', String(sec));
          throw new GslbError('API_RATE_LIMITED', `too many failed sign-in attempts; try again in ${sec} s`);
        }
        const user = svc.users.byEmail(email);
        const usable = user && user.authProvider === 'password' ? user.passwordHash : null;
        if (!(await verifyPassword(password, usable, svc.bcryptCost)) || !user) {
          svc.limiter.fail(email, source);
          throw unauthorized('invalid email or password');
        }
        if (user.totpSecret) {
          if (!totpCode) throw mfa('a TOTP code is required');
          const step = matchTotp(openTotpSecret(svc, user.totpSecret), totpCode.trim());
          if (step === undefined) { svc.limiter.fail(email, source); throw mfa('invalid TOTP code'); }
          // a code is good once: refuse it again within its step (and refuse older steps)
          if (!svc.users.useTotpStep(user.id, step)) { svc.limiter.fail(email, source); throw mfa('this TOTP code was already used; wait for the next one'); }
        }
        svc.limiter.succeed(email, source);
        req.log.info({ userId: user.id }, 'signed in');
        return startSession(svc, req, reply, user);
      });

    app.post('/auth/logout', { config: { authenticated: true }, schema: { tags: ['auth'] } }, async (req, reply) => {
      if (req.principal.sessionToken) await svc.sessions.revoke(req.principal.sessionToken);
      reply.header('set-cookie', clearedCookie(req));
      return reply.status(204).send();
    });

    app.get('/auth/me', { config: { authenticated: true }, schema: { tags: ['auth'] } }, async (req) => {
      const p = req.principal;
      if (p.kind === 'user') {
        const u = requireSessionUser(svc, req);
        return { kind: 'user', ...publicUser(u), permissions: permissionsOf(u.role, u.tenantId, operatorTenant) };
      }
      const perms = p.kind === 'system' || p.kind === 'dev' ? PERMISSIONS : p.role && p.tenantId !== null ? permissionsOf(p.role, p.tenantId, operatorTenant) : [];
      return { kind: p.kind, userId: null, role: p.role ?? null, tenantId: p.tenantId, permissions: perms };
    });

    app.get('/auth/sso', { config: { public: true }, schema: { tags: ['auth'] } }, async () => ({
      enabled: svc.oidc !== undefined,
      ...(svc.oidc ? { authorizeUrl: '/api/v1/auth/oidc/authorize' } : {}),
    }));
  };
}
