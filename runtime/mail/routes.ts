import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from '../errors.js';
import { mailOwnerOf, ownerKey, type MailOwner } from './owner.js';
import type { MailService } from './service.js';
import type { MailTemplates } from './templates.js';
import { isMailAddress } from './settings.js';
import { apiRef, errorResponses, noContent } from '../api/schemas.js';
import type { MailSettingsBody, MailTestBody } from './route-types.js';

const tags = ['settings'];
const mailRef = (name: string) => apiRef('mail', name);
const settingsResponse = { description: "the caller's active settings (no password)", ...mailRef('MailSettings') };

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
  app.get('/settings/smtp', {
    config: { permission: 'settings:read' },
    schema: { operationId: 'getMailSettings', summary: 'Read the mail settings', tags, response: { 200: settingsResponse, ...errorResponses() } },
  }, async (req) => mail.view(ownerOf(req, operatorTenant)));

  app.put<{ Body: MailSettingsBody }>('/settings/smtp', {
    config: { permission: 'settings:write' },
    schema: {
      operationId: 'putMailSettings', summary: 'Store the mail settings; they apply to the next message', tags, body: mailRef('MailSettingsRequest'),
      // 409: the stored row's id is taken by another owner
      response: { 200: settingsResponse, ...errorResponses(400, 409) },
    },
  }, async (req) => {
    const { hasPassword: _h, source: _s, ...input } = req.body;
    const out = mail.put(ownerOf(req, operatorTenant), input);
    if (Array.isArray(out)) throw badRequest(out.join('; '));
    return out;
  });

  app.delete('/settings/smtp', {
    config: { permission: 'settings:write' },
    schema: { operationId: 'deleteMailSettings', summary: 'Clear the stored mail settings', tags, response: { ...noContent('cleared; file settings apply again at the next restart'), ...errorResponses() } },
  }, async (req, reply) => {
    mail.clear(ownerOf(req, operatorTenant));
    return reply.status(204).send();
  });

  // 502 when the mail server refused or could not be reached: `{error}` carries its detail.
  app.post<{ Body: MailTestBody }>('/settings/smtp/test', {
    config: { permission: 'settings:write' },
    schema: {
      operationId: 'testMailSettings', summary: 'Send a test message with the saved settings', tags, body: mailRef('MailTestRequest'),
      // 400: not a mail address, or no settings saved
      response: { 200: { description: 'the server took the message', ...mailRef('MailTestResult') }, ...errorResponses(400, 502) },
    },
  }, async (req, reply) => {
    const to = req.body.to.trim();
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
