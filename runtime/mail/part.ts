import type { Core } from '../app.js';
import type { ApiExtensions } from '../api/server.js';
import { PARTS } from '../parts.js';
import { getRow } from '../../core/snapshot/snapshot.js';
import { createPasswordBox } from './password-box.js';
import { MailService } from './service.js';
import { MailSettingsStore } from './settings-store.js';
import { fromFileItem } from './settings.js';
import { MailTemplates } from './templates.js';
import { settingsSmtpRoutes } from './routes.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** outbound mail: the per-owner service (also `core.mail`) and the alert templates */
    mail?: MailRuntime;
  }
}

export interface MailRuntime {
  service: MailService;
  templates: MailTemplates;
}

/**
 * The mail part (docs/alerts.md "Mail"): installs the real mailer as `core.mail`, with the
 * settings of every owner (`mail:system`, `mail:<tenant>` plan rows, and `alerts.smtp` from the
 * file), the alert templates, and /settings/smtp.
 */
export function setupMail(core: Core, ext: Pick<ApiExtensions, 'apiPlugins'>): MailRuntime {
  const log = core.log.child({ component: 'mail' });
  const box = createPasswordBox(core.env.GSLB_SECRET_KEY);
  const operatorTenant = core.config.tenancy.operatorTenant;
  const store = new MailSettingsStore(core, box, operatorTenant);
  const service = new MailService({
    store, file: core.config.alerts.smtp.map(fromFileItem), log, operatorTenant,
    tenantOfPool: (poolId) => getRow(core.holder.current, 'pool', poolId)?.tenantId,
  });
  core.mail = service;
  if (!box.encrypting && store.rows().some((r) => r.password?.startsWith('plain:'))) log.warn('GSLB_SECRET_KEY is unset: the stored mail password is kept unencrypted');
  core.closers.push(core.bus.on('plan_applied', ({ plan }) => service.planApplied(plan)));
  const templates = new MailTemplates(core.config.alerts.mailTemplatesDir);
  ext.apiPlugins.push(settingsSmtpRoutes(service, templates, core.config.node.id, operatorTenant));
  const rt: MailRuntime = { service, templates };
  core.ports.mail = rt;
  return rt;
}

PARTS.push({ name: 'mail', setup: (core, ext) => { setupMail(core, ext); } });
