import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from '../errors.js';
import { mailOwnerOf, ownerKey, type MailOwner } from './owner.js';
import type { MailService } from './service.js';
import type { MailSettingsInput } from './settings.js';
import type { MailTemplates } from './templates.js';
import { isMailAddress } from './settings.js';

const settingsBody = {
  type: 'object',
  additionalProperties: false,
  required: ['host'],
  properties: {
    host: { type: 'string', minLength: 1, maxLength: 253 },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    from: { type: 'string', maxLength: 320 },
    to: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 3, maxLength: 320 } },
    username: { type: 'string', maxLength: 256 },
    password: { type: 'string', maxLength: 1024, description: 'write only; omitted or empty keeps the stored one' },
    tls: { type: 'boolean' },
    startTls: { type: 'boolean' },
    enabled: { type: 'boolean' },
    // read-only fields a client may send back from GET; ignored
    hasPassword: { type: 'boolean' },
    source: { type: 'string' },
  },
} as const;

const testBody = {
  type: 'object',
  additionalProperties: false,
  required: ['to'],
  properties: { to: { type: 'string', minLength: 3, maxLength: 320 } },
} as const;

/** The settings a request acts on: the system key and dev mode have no tenant and act server-wide. */
function ownerOf(req: FastifyRequest, operatorTenant: string): MailOwner {
  const p = req.principal;
  return mailOwnerOf(p.kind === 'system' || p.kind === 'dev' ? null : p.tenantId, operatorTenant);
}

/**
 * GET/PUT/DELETE /settings/smtp and POST /settings/smtp/test (gslb-config-auth.md §4), guarded
 * by settings:read / settings:write. Each acts on the caller's own settings (docs/alerts.md): the
 * system key, dev mode and the operator tenant's principals on the server-wide row, any other
 * tenant's principals on that tenant's row only. The password is write-only and never returned.
 */
export const settingsSmtpRoutes = (mail: MailService, templates: MailTemplates, node: string, operatorTenant: string) => async (app: FastifyInstance): Promise<void> => {
  app.get('/settings/smtp', { config: { permission: 'settings:read' }, schema: { tags: ['settings'] } }, async (req) => mail.view(ownerOf(req, operatorTenant)));

  app.put('/settings/smtp', { config: { permission: 'settings:write' }, schema: { tags: ['settings'], body: settingsBody } }, async (req) => {
    const { hasPassword: _h, source: _s, ...input } = req.body as MailSettingsInput & { hasPassword?: boolean; source?: string };
    const out = mail.put(ownerOf(req, operatorTenant), input);
    if (Array.isArray(out)) throw badRequest(out.join('; '));
    return out;
  });

  app.delete('/settings/smtp', { config: { permission: 'settings:write' }, schema: { tags: ['settings'] } }, async (req, reply) => {
    mail.clear(ownerOf(req, operatorTenant));
    return reply.status(204).send();
  });

  // 502 when the mail server refused or could not be reached: `{error}` carries its detail.
  app.post('/settings/smtp/test', { config: { permission: 'settings:write' }, schema: { tags: ['settings'], body: testBody } }, async (req, reply) => {
    const to = (req.body as { to: string }).to.trim();
    if (!isMailAddress(to)) throw badRequest(`to: "${to}" is not a mail address`);
    const owner = ownerOf(req, operatorTenant);
    const { settings, source } = mail.current(owner);
    if (!settings) throw badRequest('no mail settings: PUT /api/v1/settings/smtp first');
    const body = await templates.render('test', { node, source, server: `${settings.host}:${settings.port}` });
    try {
      const r = await mail.sendTest(owner, { to: [to], ...body });
      return { ok: true, accepted: r.accepted, rejected: r.rejected, response: r.response, messageId: r.messageId, server: r.server };
    } catch (err) {
      req.log.warn({ owner: ownerKey(owner), detail: (err as Error).message }, 'mail test failed');
      return reply.status(502).send({ error: `test message not sent: ${(err as Error).message}` });
    }
  });
};
