import type { Core } from '../app.js';
import { SYSTEM_MAIL } from '../mail/port.js';
import type { MailService } from '../mail/port.js';
import { createHttpClient } from '../net/http-client.js';
import { parseCidr } from '../net/ip.js';
import { PARTS } from '../parts.js';
import { ALERT_RETRY_DELAYS_MS, AlertDispatcher } from './dispatcher.js';
import { healthAlertOf, type AlertEvent } from './events.js';
import { AlertQueue } from './queue.js';
import { clusterEventId } from './cluster-events.js';
import { createAlertMetrics } from './metrics.js';
import { ALERT_RETRY_ENV, parseRetryDelays } from './retry-schedule.js';
import { buildTargets } from './targets/index.js';
import { RowTargets, type RowTargetDeps } from './row-targets.js';
import { alertTargetRoutes } from './routes.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the alert dispatcher and mail service (tests wait on the dispatcher's `idle`) */
    alerts?: AlertsInfo;
  }
}

/** What the alerts part leaves in `core.ports.alerts` (tests wait on `idle`). */
export interface AlertsInfo {
  dispatcher: AlertDispatcher;
  mail: MailService;
  /** what alert-target rows send with (POST /alert-targets/{id}/test uses the same) */
  rowDeps: RowTargetDeps;
}

/**
 * Sends alerts (mail through the mail part, which runs first) for `health_transition`,
 * `gitops_rejected` and `gitops_rollback` bus events to every configured target, and for applied
 * git revisions (`gitops_applied`) to the alert-target rows that ask for them. The file's targets are
 * server-wide; alert-target rows receive only their tenant's events (docs/alerts.md). A rejection
 * repeated for the same revision and reason (the loop retries a bad commit) alerts once.
 */
export function setupAlerts(core: Core): AlertsInfo {
  const log = core.log.child({ component: 'alerts' });
  if (!core.ports.mail) throw new Error('the alerts part starts after the mail part');
  const { service: mail, templates } = core.ports.mail;

  const client = createHttpClient({ timeoutMs: 10_000 });
  const targets = buildTargets(core.config.alerts, client, () => core.mail, templates, core.config.node.id);
  // tenants' targets name URLs the operator does not vet: the SSRF guard of form actions applies
  const guardedClient = createHttpClient({ timeoutMs: 10_000, ssrfGuard: true, ssrfAllow: core.config.alerts.allowPrivateTargets.map((c) => parseCidr(c)!) });
  const rowDeps: RowTargetDeps = {
    client, guardedClient, getMail: () => core.mail, templates, node: core.config.node.id, snapshot: () => core.holder.current,
    secrets: { env: core.env, dirs: core.config.alerts.secretDirs, operatorTenant: core.config.tenancy.operatorTenant },
  };
  const rows = new RowTargets(rowDeps);
  let dispatcher!: AlertDispatcher;
  const metrics = createAlertMetrics(core.metrics, () => dispatcher.pending());
  dispatcher = new AlertDispatcher({ targets, moreTargets: () => rows.current(), queueSize: core.config.alerts.queueSize, log, metrics, retryDelaysMs: retrySchedule(core.env, log) });

  // every event waits in SQLite until delivered; events of the cluster are sent by the node that claims them (docs/alerts.md)
  const queue = new AlertQueue(core.db);
  const claim = core.ports.clusterClaimOwned;
  let stopped = false;
  const retries = new Set<NodeJS.Timeout>();
  const hand = (id: number, ev: AlertEvent) => dispatcher.enqueue(ev, () => queue.remove(id));
  const deliver = (id: number, ev: AlertEvent, clusterId: string | null, claimed: boolean): void => {
    if (stopped) return;
    if (clusterId === null || !claim || claimed) { hand(id, ev); return; }
    claim(ALERT_BUCKET, ALERT_CLAIM_TTL_MS, [clusterId]).then((mine) => {
      if (stopped) return;
      if (!mine) { queue.remove(id); log.debug({ event: ev.type, id: clusterId }, 'alert sent by another node'); return; }
      queue.markClaimed(id);
      hand(id, ev);
    }, (err: unknown) => {
      // the bus is away: the event stays queued and is claimed once it returns
      log.debug({ err, event: ev.type }, 'alert claim failed; retrying');
      const t = setTimeout(() => { retries.delete(t); deliver(id, ev, clusterId, false); }, CLAIM_RETRY_MS);
      t.unref();
      retries.add(t);
    });
  };
  const send = (ev: AlertEvent) => {
    const clusterId = clusterEventId(ev);
    deliver(queue.add(ev, clusterId), ev, clusterId, false);
  };
  for (const q of queue.all()) deliver(q.id, q.event, q.clusterId, q.claimed);

  // the revision served when the event happened, read at queue time (docs/alerts.md)
  const applied = () => ({ commit: core.holder.provenance.commit, at: core.holder.provenance.appliedAt });
  const offHealth = core.bus.on('health_transition', (t) => send({ ...healthAlertOf(t), applied: applied() }));
  let lastRejection = '';
  const offGitops = core.bus.on('gitops_rejected', (r) => {
    const key = `${r.revision}\u0000${r.reason}`;
    if (key === lastRejection) return;
    lastRejection = key;
    send({ type: 'gitops_rejected', revision: r.revision, reason: r.reason, message: r.message, timestamp: Date.now(), node: core.config.node.id, applied: applied() });
  });
  // a breach after an apply: rolled back, or nothing to roll back to (docs/gitops.md "Automatic rollback")
  const offRollback = core.bus.on('gitops_rollback', (e) => {
    send({ type: 'gitops_rollback', ...e, timestamp: Date.now(), node: core.config.node.id, applied: applied() });
  });
  // A git revision applied here (an empty commit changes nothing and is not announced; a plan
  // replayed from the cluster's config stream was announced by the node that applied it first; a
  // rollback's apply is announced as gitops_rollback).
  const offApplied = core.applyHooks.add({
    afterSwap(plan, _next, _prev, opts) {
      if (plan.origin !== 'git' || opts.fromStream || opts.meta?.trigger === 'rollback') return;
      send({ type: 'gitops_applied', revision: plan.revision, creates: plan.counts.create, updates: plan.counts.update, deletes: plan.counts.delete, timestamp: Date.now(), node: core.config.node.id, applied: applied() });
    },
  });
  // a canary revision: every node applied it from the stream; the git leader announces it once
  const offPromoted = core.bus.on('gitops_promoted', (e) => {
    send({ type: 'gitops_applied', ...e, timestamp: Date.now(), node: core.config.node.id, applied: applied() });
  });
  core.closers.push(async () => {
    stopped = true;
    for (const t of retries) clearTimeout(t);
    offPromoted();
    offHealth();
    offGitops();
    offRollback();
    offApplied();
    await dispatcher.close();
    await client.close();
  });
  log.info({ webhooks: core.config.alerts.webhooks.length, oncall_a: core.config.alerts.oncall_a.length, oncall_b: core.config.alerts.oncall_b.length, mail: mail.current(SYSTEM_MAIL).source }, 'alerts ready');
  const info: AlertsInfo = { dispatcher, mail, rowDeps };
  core.ports.alerts = info;
  return info;
}

/** KV bucket of the claims of cluster events, and how long a claim is kept (a repeat within it is not sent again). */
const ALERT_BUCKET = 'SVC_ALERTS';
const ALERT_CLAIM_TTL_MS = 86_400_000;
/** how often a claim that failed (the bus away) is tried again */
const CLAIM_RETRY_MS = 2_000;

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

PARTS.push({
  name: 'alerts',
  setup(core, ext) {
    const info = setupAlerts(core);
    const plugin = alertTargetRoutes(core, info.rowDeps);
    ext.apiPlugins.push(async (app) => { await app.register(plugin); });
  },
});
