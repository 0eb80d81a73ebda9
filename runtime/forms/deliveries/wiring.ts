import type { Core } from '../../app.js';
import { parseCidr } from '../../net/ip.js';
import { createHttpClient, type HttpClient } from '../../net/http-client.js';
import type { FormService } from '../forms/service.js';
import type { FormStore } from '../forms/store.js';
import type { SubmissionStore } from '../submissions/store.js';
import { Outbox } from './outbox.js';
import { ActionSender } from './sender.js';
import { DeliveryService } from './service.js';
import { DeliveryWorker } from './worker.js';
import { DigestRuns } from './digests.js';
import { RenderPool } from './render-pool.js';
import { templateRenderer } from './templates.js';
import { conditionsMatch } from '../forms/conditions.js';
import { valuesOf } from '../intake/fields.js';
import type { FormActionRow } from '../forms/rows.js';
import type { SubmissionRecord } from '../submissions/types.js';

/** The delivery machinery of one daemon: queue, guarded client, sender, worker and the API's service. */
export interface Deliveries {
  /** the render pool of tenants' templates (closed at stop) */
  renders: RenderPool;
  outbox: Outbox; http: HttpClient; sender: ActionSender; worker: DeliveryWorker; service: DeliveryService;
  /** runs the due digests at `now` (every `forms.deliveries.digestCheckMs`) */
  digests: (now: number) => Promise<number>;
  digestRuns: DigestRuns;
}

/** Whether a digest lists a submission: its conditions, like any action's. */
const digestMatches = (a: FormActionRow, s: SubmissionRecord) => conditionsMatch(a.conditions, a.conditions_mode, (f) => valuesOf(s.fields, f));

/**
 * Builds the deliveries from the config (`forms.deliveries`, `forms.services`): one HTTP client
 * with the SSRF guard (and the operator's `allowPrivateTargets`), a deadline and a response cap;
 * mail through the workspace's own settings; tenants' templates rendered in the render pool
 * (`forms.render`); an action that keeps failing is paused and the workspace's alert recipients
 * are told by mail.
 */
export function buildDeliveries(core: Core, forms: FormStore, svc: FormService, submissions: SubmissionStore): Deliveries {
  const cfg = core.config.forms.deliveries;
  const outbox = new Outbox(core.db);
  const http = createHttpClient({
    timeoutMs: cfg.timeoutMs, maxResponseBytes: cfg.maxResponseBytes, userAgent: 'gslbd-forms',
    ssrfGuard: true, ssrfAllow: cfg.allowPrivateTargets.map((c) => parseCidr(c)!),
  });
  const mailer = (tenantId: string) => core.mail.forTenant?.(tenantId) ?? core.mail;
  const log = core.log.child({ component: 'forms' });
  const rc = core.config.forms.render;
  const renders = new RenderPool({ workers: rc.workers, timeoutMs: rc.timeoutMs, perTenant: rc.perTenant, queuePerTenant: rc.queuePerTenant, log });
  const render = templateRenderer(renders);
  const sender = new ActionSender({ http, mailer, render, services: () => core.config.forms.services });
  const worker = new DeliveryWorker({
    outbox, log,
    action: (id) => forms.actionById(id),
    form: (id) => forms.byId(id),
    submission: (formId, id) => submissions.get(formId, id),
    send: (a, ctx, signal) => sender.send(a, ctx, signal),
    settings: () => core.config.forms.deliveries,
    pause: (action, failures, lastError) => {
      log.warn({ action: action.id, form: action.formId, tenant: action.tenantId, failures, lastError }, 'form action paused after failing repeatedly');
      try {
        svc.pauseAction(action, `failed ${failures} times in a row; last error: ${lastError}`, Date.now());
      } catch (err) {
        log.error({ err, action: action.id }, 'pausing the form action failed');
      }
      const m = mailer(action.tenantId);
      const to = m.alertRecipients?.() ?? [];
      if (to.length === 0 || !m.configured()) return;
      const what = `${action.type} action ${action.name ? `"${action.name}" ` : ''}(${action.id}) of form ${action.formId}`;
      m.send({
        to, subject: `Form action paused: ${action.name ?? action.type}`,
        text: `The ${what} failed ${failures} times in a row and was paused (enabled: false).\nLast error: ${lastError}\n\nFix it, then enable it again (PATCH /public/v1/action/${action.id} with enabled: true) and re-queue its failed deliveries (POST /public/v1/action/${action.id}/retry).`,
      }).catch((err: unknown) => log.warn({ err, action: action.id }, 'mail about a paused form action failed'));
    },
  });
  const service = new DeliveryService(outbox, (a, ctx) => sender.test(a, ctx), () => worker.kick(), render);
  const runs = new DigestRuns({
    db: core.db, log, mailer,
    digests: () => forms.actionsOfType('email_digest'),
    inWindow: (formId, start, end, limit) => submissions.inWindow(formId, start, end, limit),
  });
  return { renders, outbox, http, sender, worker, service, digests: (now) => runs.run(now, digestMatches), digestRuns: runs };
}
