import type { MailPort } from '../ports/mail.js';
import type { MailTemplates } from '../mail/port.js';
import type { HttpClient } from '../net/http-client.js';
import { rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import type { AlertEvent } from './events.js';
import { eventTenant, targetAccepts } from './filters.js';
import { resolveSecretRef, type SecretPolicy } from './secret-ref.js';
import type { AlertTarget } from './target.js';
import { ALERT_TARGET_KIND, type AlertTargetRow } from './target-row.js';
import { mailTarget } from './targets/mail.js';
import { oncallATarget } from './targets/oncall-a.js';
import { oncallBTarget } from './targets/oncall-b.js';
import { webhookTarget } from './targets/webhook.js';

/** What an alert-target row needs to send: the file targets' client, mail and templates, and the secret policy. */
export interface RowTargetDeps {
  /** the operator tenant's targets (and the file's): operators aim them at their own hosts */
  client: HttpClient;
  /** every other tenant's targets: with the SSRF guard (alerts.allowPrivateTargets) */
  guardedClient: HttpClient;
  /** the server-wide mailer; a row's e-mail goes through `forTenant(row.tenantId)` */
  getMail: () => MailPort;
  templates: MailTemplates;
  node: string;
  secrets: SecretPolicy;
  snapshot: () => Snapshot;
}

/** The client a row's HTTP deliveries use: the SSRF guard for every tenant but the operator's. */
const clientOf = (row: AlertTargetRow, deps: RowTargetDeps): HttpClient => (row.tenantId === deps.secrets.operatorTenant ? deps.client : deps.guardedClient);

/**
 * The sender of one alert-target row, built with the same senders as the file's `alerts.*`
 * (webhook, oncall_a, oncall_b, mail): `accepts` applies tenancy and the row's filters
 * (filters.ts); `deliver` resolves the row's secret references at send time and hands the events
 * to the sender. Resolved secrets go into `secrets`, so the dispatcher scrubs them from its log
 * lines; they are kept nowhere else. `key` is the row's id and revision: an edited row gets a new
 * queue, while events already queued for the old one go out with the old settings.
 */
export function rowTarget(row: AlertTargetRow, deps: RowTargetDeps): AlertTarget {
  const name = `alert target ${row.name} (${row.type}, tenant ${row.tenantId})`;
  const key = `row\u0000${row.id}\u0000${row.revision}`;
  const ours = (ev: AlertEvent) => {
    const s = deps.snapshot();
    return targetAccepts(row, ev, eventTenant(ev, s, deps.secrets.operatorTenant), s);
  };
  if (row.type === 'email') {
    const to = row.email?.to ?? [];
    const inner = mailTarget(deps.getMail, deps.templates, deps.node, {
      name,
      route: () => { const m = deps.getMail(); return m.forTenant ? m.forTenant(row.tenantId) : m; },
      recipients: (m) => (m.configured() ? to : []),
    });
    return { ...inner, key, type: 'mail', accepts: (ev) => ours(ev) && (inner.accepts?.(ev) ?? true) };
  }
  const secrets: string[] = [];
  const resolve = (ref: Parameters<typeof resolveSecretRef>[0]) => resolveSecretRef(ref, row.tenantId, deps.secrets);
  const build = async (): Promise<AlertTarget> => {
    if (row.type === 'webhook') {
      const w = row.webhook!;
      return webhookTarget({ url: w.url, ...(w.secret ? { secret: await resolve(w.secret) } : {}) }, 0, clientOf(row, deps));
    }
    if (row.type === 'oncall_a') {
      const a = row.oncall_a!;
      return oncallATarget({ routingKey: await resolve(a.routingKey), severity: a.severity, ...(a.baseUrl ? { baseUrl: a.baseUrl } : {}) }, 0, clientOf(row, deps));
    }
    const b = row.oncall_b!;
    return oncallBTarget({ apiKey: await resolve(b.apiKey), priority: b.priority, region: b.region, ...(b.baseUrl ? { baseUrl: b.baseUrl } : {}) }, 0, clientOf(row, deps));
  };
  return {
    type: row.type, name, key, batch: 1, secrets, accepts: ours,
    async deliver(events, signal) {
      const t = await build();
      for (const s of t.secrets) if (!secrets.includes(s)) secrets.push(s);
      await t.deliver(events, signal);
    },
  };
}

/**
 * The senders of the current snapshot's alert-target rows, rebuilt when the snapshot changes and
 * reused per row id and revision (so a row's queue survives unrelated applies).
 */
export class RowTargets {
  private seen: Snapshot | undefined;
  private list: AlertTarget[] = [];
  private byKey = new Map<string, AlertTarget>();

  constructor(private readonly deps: RowTargetDeps) {}

  /** The senders of every alert-target row (disabled ones accept nothing). */
  current(): readonly AlertTarget[] {
    const s = this.deps.snapshot();
    if (s === this.seen) return this.list;
    const next = new Map<string, AlertTarget>();
    for (const row of rowsOf<AlertTargetRow>(s, ALERT_TARGET_KIND).values()) {
      const k = `row\u0000${row.id}\u0000${row.revision}`;
      next.set(k, this.byKey.get(k) ?? rowTarget(row, this.deps));
    }
    this.byKey = next;
    this.list = [...next.values()];
    this.seen = s;
    return this.list;
  }
}
