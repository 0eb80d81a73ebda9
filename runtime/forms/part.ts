import { PARTS } from '../parts.js';
import { FormService } from './forms/service.js';
import { FormStore } from './forms/store.js';
import { formRoutes } from './forms/routes/forms.js';
import { formDetailRoutes } from './forms/routes/details.js';
import { actionRoutes } from './forms/routes/actions.js';
import { planRoutes } from './forms/routes/plan.js';
import { IntakeService } from './intake/service.js';
import { intakeRoutes } from './intake/routes.js';
import { DisposableDomains } from './intake/spam/disposable.js';
import { cachedBlockLists } from './intake/spam/pipeline.js';
import { FormKeyStore } from './keys/store.js';
import { formKeyRoutes } from './keys/routes.js';
import { ClusterRateLimiter } from './public/rate-limit.js';
import { publicApi, PUBLIC_PREFIX } from './public/routes/server.js';
import { publicErrorBody } from './public/errors.js';
import { submissionRoutes } from './submissions/routes.js';
import { deliveryRoutes } from './deliveries/routes.js';
import { buildDeliveries, type Deliveries } from './deliveries/wiring.js';
import { queueReminders } from './deliveries/reminders.js';
import { domainRoutes } from './domains/routes.js';
import { DomainService } from './domains/service.js';
import { lookupTxt } from './domains/verify.js';
import { SubmissionService } from './submissions/service.js';
import { formDataCleanup } from './submissions/cleanup.js';
import { FileVault, filesDirOf } from './submissions/files.js';
import { SubmissionStore } from './submissions/store.js';
import type { SubmissionFields } from './submissions/types.js';
import type { FormRow } from './forms/rows.js';
import { startFormReplication, type FormReplication } from './replication/wiring.js';
import { holdsNow } from '../cluster/port.js';

/**
 * The form service (docs/forms.md): the workspace's API keys at /api/v1/apikeys, the /public/v1 server at the root of the API (its own keys,
 * scopes, rate limit and `{name, message}` errors) with the form, schema, action, submission and plan routes, and the public
 * submission endpoint `/f/{form_id}`. Forms and actions are rows, written through `core.apply` like every other row; submissions
 * are node-local data, removed with their form whichever way the form goes.
 */
declare module '../ports/parts.js' {
  interface Ports {
    /** the form service's background work: the delivery machinery and the scheduled runs (reminders, digests) */
    forms?: { deliveries: Deliveries; scheduled: (now: number) => Promise<void>; replication: FormReplication | undefined };
  }
}

/** The submission service, sharing claims and replays with the cluster when there is one. */
function sharedSubmissions(s: SubmissionService, replication: FormReplication | undefined): SubmissionService {
  s.shared = replication?.submissions;
  return s;
}

PARTS.push({
  name: 'forms',
  setup(core, ext) {
    const cfg = core.config.forms;
    const forms = new FormStore(core);
    const submissions = new SubmissionStore(core.db);
    const vault = new FileVault(filesDirOf(core.config));
    const svc = new FormService(forms, () => core.config.forms, submissions);
    const intake = new IntakeService({
      forms, submissions, vault, config: () => core.config.forms, bus: core.bus,
      spam: {
        disposable: DisposableDomains.load(cfg.spam.disposableDomainsFile),
        recaptcha: cfg.recaptcha.secret ? { secret: cfg.recaptcha.secret, verifyURL: cfg.recaptcha.verifyURL, timeoutMs: cfg.recaptcha.timeoutMs } : null,
        blockList: cachedBlockLists(),
      },
    });
    const d = buildDeliveries(core, forms, svc, submissions);
    const keys = new FormKeyStore(core);
    // in a cluster: submissions, claims, files and deliveries shared over JetStream (docs/forms.md "In a cluster")
    const replication = startFormReplication(core, {
      streams: core.ports.clusterStreams, store: submissions, vault, deliveries: d,
      claimActions: (f, fields) => intake.actionsFor(f, fields, 'submission.claimed'), keys,
    });
    const reminderActions = (f: FormRow, fields: SubmissionFields) => intake.actionsFor(f, fields, 'submission.reminder');
    core.ports.forms = {
      deliveries: d,
      replication,
      // reminders of unclaimed submissions, then digests; tests call it with their own clock
      scheduled: async (now) => {
        const reminded = replication ? await replication.reminders(forms.allForms(), reminderActions, now) : queueReminders(forms.allForms(), submissions, reminderActions, now);
        if (reminded > 0) d.worker.kick();
        await d.digests(now);
      },
    };
    core.applyHooks.add(formDataCleanup(submissions, vault, d.outbox));
    core.closers.push(core.bus.on('form_event', (e) => {
      // the live feed shows a workspace's submission events to that workspace only (runtime/ws/tenant.ts)
      core.bus.emit('ws_message', { type: e.type, payload: e.payload });
      // in a cluster the claim's message queued them on every node already
      if (e.type === 'submission.claimed' && !replication) {
        const form = forms.byId(e.formId);
        const sub = form && submissions.get(form.id, e.payload.submission_id as number);
        if (form && sub) submissions.queueEvent(form.id, sub.id, intake.actionsFor(form, sub.fields, 'submission.claimed'), 'submission.claimed', Date.now());
      }
      d.worker.kick();
    }));
    const routes = [
      formRoutes(svc), formDetailRoutes(svc, () => core.config.api.publicURL), actionRoutes(svc), planRoutes(svc),
      submissionRoutes(svc, sharedSubmissions(new SubmissionService(submissions, (form, fields) => intake.actionsFor(form, fields), core.bus), replication), vault),
      deliveryRoutes(svc, d.service, (id) => { d.outbox.resetFailures(id); d.worker.kick(); }),
    ];
    const domains = new DomainService(core, () => ({ ...core.config.forms.domains, publicURL: core.config.api.publicURL }), () => core.config.forms,
      (name) => lookupTxt(name, core.config.forms.domains.resolvers, core.config.forms.domains.timeoutMs));
    routes.push(domainRoutes(domains));
    ext.apiPlugins.push(formKeyRoutes(keys));
    ext.errorShapes.push({ prefix: PUBLIC_PREFIX, body: publicErrorBody });
    ext.rootPlugins.push(publicApi({ keys, limiter: new ClusterRateLimiter('forms_key', cfg.rateLimits.perKeyPerMinute, () => core.ports.sharedLimits), routes }));
    ext.rootPlugins.push(intakeRoutes({ intake, vault, limiter: new ClusterRateLimiter('forms_ip', cfg.rateLimits.perIpPerMinute, () => core.ports.sharedLimits), limits: () => core.config.forms.intake, publicURL: () => core.config.api.publicURL,
      domain: (host) => domains.byHost(host),
    }));
  },
  start(core) {
    const { deliveries: d, scheduled, replication } = core.ports.forms!;
    const cfg = core.config.forms.deliveries;
    let timer: NodeJS.Timeout | undefined;
    if (cfg.enabled) {
      d.worker.start();
      let running = false;
      timer = setInterval(() => {
        if (running) return;
        running = true;
        // in a cluster only the holder of the lease runs them (once per cluster)
        (async () => { if (!replication || await holdsNow(replication.lease)) await scheduled(Date.now()); })().catch((err: unknown) => core.log.error({ err }, 'form reminders or digests failed')).finally(() => { running = false; });
      }, cfg.digestCheckMs);
      timer.unref();
    } else {
      core.log.info('form deliveries are queued but not sent on this node (forms.deliveries.enabled: false)');
    }
    return async () => {
      if (timer) clearInterval(timer);
      await d.worker.stop();
      await replication?.stop();
      await d.renders.close();
      await d.http.close();
    };
  },
});
