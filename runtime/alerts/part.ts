import type { Core } from '../app.js';
import { SYSTEM_MAIL } from '../mail/owner.js';
import type { MailService } from '../mail/service.js';
import { createHttpClient } from '../net/http-client.js';
import { PARTS } from '../parts.js';
import { ALERT_RETRY_DELAYS_MS, AlertDispatcher } from './dispatcher.js';
import { healthAlertOf } from './events.js';
import { createAlertMetrics } from './metrics.js';
import { ALERT_RETRY_ENV, parseRetryDelays } from './retry-schedule.js';
import { buildTargets } from './targets/index.js';

declare module '../ports.js' {
  interface Ports {
    /** the alert dispatcher and mail service (tests wait on the dispatcher's `idle`) */
    alerts?: AlertsInfo;
  }
}

/** What the alerts part leaves in `core.ports.alerts` (tests wait on `idle`). */
export interface AlertsInfo {
  dispatcher: AlertDispatcher;
  mail: MailService;
}

/**
 * Sends alerts (mail through the mail part, which runs first) for
 * `health_transition` and `gitops_rejected` bus events to every configured target. A rejection
 * repeated for the same revision and reason (the loop retries a bad commit) alerts once.
 */
export function setupAlerts(core: Core): AlertsInfo {
  const log = core.log.child({ component: 'alerts' });
  if (!core.ports.mail) throw new Error('the alerts part starts after the mail part');
  const { service: mail, templates } = core.ports.mail;

  const client = createHttpClient({ timeoutMs: 10_000 });
  const targets = buildTargets(core.config.alerts, client, () => core.mail, templates, core.config.node.id);
  let dispatcher!: AlertDispatcher;
  const metrics = createAlertMetrics(core.metrics, () => dispatcher.pending());
  dispatcher = new AlertDispatcher({ targets, queueSize: core.config.alerts.queueSize, log, metrics, retryDelaysMs: retrySchedule(core.env, log) });

  // the revision served when the event happened, read at queue time (docs/alerts.md)
  const applied = () => ({ commit: core.holder.provenance.commit, at: core.holder.provenance.appliedAt });
  const offHealth = core.bus.on('health_transition', (t) => dispatcher.enqueue({ ...healthAlertOf(t), applied: applied() }));
  let lastRejection = '';
  const offGitops = core.bus.on('gitops_rejected', (r) => {
    const key = `${r.revision}\u0000${r.reason}`;
    if (key === lastRejection) return;
    lastRejection = key;
    dispatcher.enqueue({ type: 'gitops_rejected', revision: r.revision, reason: r.reason, message: r.message, timestamp: Date.now(), node: core.config.node.id, applied: applied() });
  });
  core.closers.push(async () => {
    offHealth();
    offGitops();
    await dispatcher.close();
    await client.close();
  });
  log.info({ webhooks: core.config.alerts.webhooks.length, oncall_a: core.config.alerts.oncall_a.length, oncall_b: core.config.alerts.oncall_b.length, mail: mail.current(SYSTEM_MAIL).source }, 'alerts ready');
  const info: AlertsInfo = { dispatcher, mail };
  core.ports.alerts = info;
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

PARTS.push({ name: 'alerts', setup: (core) => { setupAlerts(core); } });
