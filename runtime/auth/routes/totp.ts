import type { FastifyInstance } from 'fastify';
import type { AuthServices } from '../services.js';
import { matchTotp, newTotpSecret } from '../totp.js';
import { badRequest, conflict } from '../../errors.js';
import { apiRef, errorResponses } from '../../api/schemas.js';
import { openTotpSecret, requireSessionUser } from './common.js';
import type { TotpVerifyBody } from './types.js';

const tags = ['auth'];

/**
 * TOTP enrolment (gslb-config-auth.md §4, §5.6). Setup stores a pending secret (encrypted) and
 * returns `{secret (base32), otpauthUrl, qrPng (PNG data URL)}`; verify checks a code against the
 * pending secret and activates it. Both need a user session (403 otherwise) and GSLB_SECRET_KEY
 * (409 without it).
 */
export function authTotpRoutes(svc: AuthServices) {
  return async (app: FastifyInstance) => {
    app.post('/auth/totp/setup', {
      config: { authenticated: true },
      schema: {
        operationId: 'setupTotp', summary: 'Start TOTP enrolment: a new secret, returned once', tags,
        response: {
          200: { description: 'the pending secret, its provisioning URI and QR code', headers: { 'cache-control': { type: 'string', description: '`no-store`' } }, ...apiRef('auth', 'TotpSetup') },
          ...errorResponses(409),
        },
      },
    }, async (req, reply) => {
      const user = requireSessionUser(svc, req);
      if (!svc.box) throw conflict('TOTP cannot be enrolled: GSLB_SECRET_KEY is not set on the server');
      const t = await newTotpSecret(user.email);
      svc.users.update(user.id, { totpPending: svc.box.seal(t.secret, 'totp') });
      reply.header('cache-control', 'no-store');
      return { secret: t.secret, otpauthUrl: t.otpauthUrl, qrPng: t.qrPng };
    });

    app.post<{ Body: TotpVerifyBody }>('/auth/totp/verify', {
      config: { authenticated: true },
      schema: {
        operationId: 'verifyTotp', summary: 'Activate the pending TOTP secret with a current code', tags, body: apiRef('auth', 'TotpVerifyRequest'),
        // 400: no enrolment in progress or a wrong code; 500: this node cannot open the secret
        response: { 200: { description: 'TOTP is active: later sign-ins need a code', ...apiRef('auth', 'TotpEnabled') }, ...errorResponses(400, 409, 500) },
      },
    }, async (req) => {
      const user = requireSessionUser(svc, req);
      if (!svc.box) throw conflict('TOTP cannot be enrolled: GSLB_SECRET_KEY is not set on the server');
      if (!user.totpPending) throw badRequest('no TOTP enrolment in progress: call /auth/totp/setup first');
      const step = matchTotp(openTotpSecret(svc, user.totpPending), req.body.code.trim());
      if (step === undefined) throw badRequest('invalid TOTP code');
      // the enrolment code counts as used, so it cannot open a login in the same step
      svc.users.update(user.id, { totpSecret: user.totpPending, totpPending: null, totpLastStep: step });
      req.log.info({ userId: user.id }, 'TOTP enabled');
      return { totpEnabled: true };
    });
  };
}
