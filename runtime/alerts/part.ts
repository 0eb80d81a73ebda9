import type { Core } from '../app.js';
import type { ApiExtensions } from '../api/server.js';
import { settingsSmtpRoutes } from '../api/routes/settings-smtp.js';
import { SYSTEM_MAIL } from '../mail/owner.js';
import { createPasswordBox } from '../mail/password-box.js';
import { MailService } from '../mail/service.js';
import { MailSettingsStore } from '../mail/settings-store.js';
import { fromFileItem } from '../mail/settings.js';
import { MailTemplates } from '../mail/templates.js';
import { createHttpClient } from '../net/http-client.js';
import { PARTS } from '../parts.js';
import { getRow } from '../snapshot/snapshot.js';
import { ALERT_RETRY_DELAYS_MS, AlertDispatcher } from './dispatcher.js';
import { healthAlertOf } from './events.js';
import { createAlertMetrics } from './metrics.js';
import { ALERT_RETRY_ENV, parseRetryDelays } from './retry-schedule.js';
import { buildTargets } from './targets/index.js';

/** What the alerts part leaves in `core.info.alerts` (tests wait on `idle`). */
export interface AlertsInfo {
  dispatcher: AlertDispatcher;
  mail: MailService;
}

/**
 * Installs the real mailer as core.mail, mounts /settings/smtp, and sends alerts for
 * `health_transition` and `gitops_rejected` bus events to every configured target. A rejection
 * repeated for the same revision and reason (the loop retries a bad commit) alerts once.
 */
export function setupAlerts(core: Core, ext: Pick<ApiExtensions, 'apiPlugins'>): AlertsInfo {
  const log = core.log.child({ component: 'alerts' });
  const box = createPasswordBox(core.env.GSLB_SECRET_KEY);
  const operatorTenant = core.config.tenancy.operatorTenant;
  const store = new MailSettingsStore(core, box, operatorTenant);
  const mail = new MailService({
    store, file: core.config.alerts.smtp.map(fromFileItem), log: core.log.child({ component: 'mail' }), operatorTenant,
    tenantOfPool: (poolId) => getRow(core.holder.current, 'pool', poolId)?.tenantId,
  });
  core.mail = mail;
  if (!box.encrypting && store.rows().some((r) => r.password?.startsWith('plain:'))) log.warn('GSLB_SECRET_KEY is unset: the stored mail password is kept unencrypted');
  const offPlans = core.bus.on('plan_applied', ({ plan }) => mail.planApplied(plan));
  const templates = new MailTemplates(core.config.alerts.mailTemplatesDir);
  ext.apiPlugins.push(settingsSmtpRoutes(mail, templates, core.config.node.id, operatorTenant));

  const client = createHttpClient({ timeoutMs: 10_000 });
  const targets = buildTargets(core.config.alerts, client, () => core.mail, templates, core.config.node.id);
  let dispatcher!: AlertDispatcher;
  const metrics = createAlertMetrics(core.metrics, () => dispatcher.pending());
  dispatcher = new AlertDispatcher({ targets, queueSize: core.config.alerts.queueSize, log, metrics, retryDelaysMs: retrySchedule(core.env, log) });

  const offHealth = core.bus.on('health_transition', (t) => dispatcher.enqueue(healthAlertOf(t)));
  let lastRejection = '';
  const offGitops = core.bus.on('gitops_rejected', (r) => {
    const key = `${r.revision}\u0000${r.reason}`;
    if (key === lastRejection) return;
    lastRejection = key;
    dispatcher.enqueue({ type: 'gitops_rejected', revision: r.revision, reason: r.reason, message: r.message, timestamp: Date.now(), node: core.config.node.id });
  });
  core.closers.push(async () => {
    offPlans();
    offHealth();
    offGitops();
    await dispatcher.close();
    await client.close();
  });
  log.info({ webhooks: core.config.alerts.webhooks.length, oncall_a: core.config.alerts.oncall_a.length, oncall_b: core.config.alerts.oncall_b.length, mail: mail.current(SYSTEM_MAIL).source }, 'alerts ready');
  const info: AlertsInfo = { dispatcher, mail };
  core.info.alerts = info;
  return info;
}

/** The schedule from GSLBD_ALERT_RETRY_DELAYS_MS when set and valid (logged), else the specified one. */
function retrySchedule(env: NodeJS.ProcessEnv, log: Core['log']): readonly number[] {
  const text = env[ALERT_RETRY_ENV];
  if (text === undefined || text === '') return ALERT_RETRY_DELAYS_MS;
  const parsed = parseRetryDelays(text);
  if (typeof parsed === 'string') {
    log.warn({ variable: ALERT_RETRY_ENV, detail: parsed, retryDelaysMs: ALERT_RETRY_DELAYS_MS }, 'alert retry schedule from the environment ignored');
    return ALERT_RETRY_DELAYS_MS;
  }
  log.warn({ variable: ALERT_RETRY_ENV, retryDelaysMs: parsed }, 'alert retry schedule replaced from the environment');
  return parsed;
}

PARTS.push({ name: 'alerts', setup: (core, ext) => { setupAlerts(core, ext); } });
