import type { MailPort } from '../../ports/mail.js';
import type { MailTemplates, TemplateName } from '../../mail/port.js';
import { appliedFields, type AlertEvent } from '../events.js';
import type { AlertTarget } from '../target.js';

/** Template variables for a group of events of one type (docs/alerts.md lists them). */
export function mailVars(events: AlertEvent[], node: string): Record<string, unknown> {
  return {
    node,
    count: events.length,
    down: events.filter((e) => e.type === 'health_transition' && !e.healthy).length,
    up: events.filter((e) => e.type === 'health_transition' && e.healthy).length,
    events: events.map((e) => ({
      ...e, time: new Date(e.timestamp).toISOString(), ...(e.type !== 'health_transition' ? { shortRevision: e.revision.slice(0, 12) } : {}),
      ...(e.type === 'gitops_rollback' ? { shortRolledBackTo: e.rolledBackTo?.slice(0, 12) ?? null } : {}),
      appliedCommit: null, secondsSinceApply: null, ...appliedFields(e),
    })),
  };
}

/** The template of a group of events of one type. */
function templateOf(ev: AlertEvent): TemplateName {
  if (ev.type === 'health_transition') return 'alert-health';
  if (ev.type === 'gitops_rollback') return 'alert-rollback';
  return ev.type === 'gitops_rejected' ? 'alert-gitops' : 'alert-change';
}

/**
 * Where a mail target sends (defaults: the file's mail target). `route` picks the owner's mailer
 * for an event, `recipients` the addresses for that mailer (empty: nothing is queued).
 */
export interface MailRouting {
  name?: string;
  route?: (ev: AlertEvent) => MailPort;
  recipients?: (m: MailPort) => string[];
}

/**
 * The mail target. A health alert goes to the recipients of its pool's owner (`MailPort.forPool`:
 * the pool's tenant's own settings, the server-wide ones for the operator tenant; never another
 * tenant's); a GitOps rejection or rollback goes to the server-wide recipients. The owner is fixed when the
 * event is queued (the pool may be deleted before delivery); its settings are read at delivery
 * time, so PUT /settings/smtp applies at once. Takes up to 50 queued events of one type per call
 * and sends one message per owner (each owner is also its own lane), so a burst of flips becomes
 * a few mails rather than hundreds. A retried call does not resend the messages of owners that
 * already went out.
 */
export function mailTarget(getMail: () => MailPort, templates: MailTemplates, node: string, routing: MailRouting = {}): AlertTarget {
  const routes = new WeakMap<AlertEvent, MailPort>();
  const sent = new WeakSet<AlertEvent>();
  const route = routing.route ?? ((ev: AlertEvent): MailPort => {
    const m = getMail();
    return ev.type === 'health_transition' && m.forPool ? m.forPool(ev.poolId) : m;
  });
  const recipients = routing.recipients ?? ((m: MailPort) => (m.configured() ? m.alertRecipients?.() ?? [] : []));
  return {
    type: 'mail',
    name: routing.name ?? 'mail',
    batch: 50,
    secrets: [],
    accepts(ev) {
      const m = route(ev);
      if (recipients(m).length === 0) return false;
      routes.set(ev, m);
      return true;
    },
    // one lane per owner: a tenant's failing relay never delays another tenant's or the server's mail
    lane: (ev) => (routes.get(ev) ?? route(ev)).scope ?? 'system',
    async deliver(events, signal) {
      const groups = new Map<MailPort, AlertEvent[]>();
      for (const ev of events) {
        if (sent.has(ev)) continue;
        const m = routes.get(ev) ?? route(ev);
        groups.set(m, [...(groups.get(m) ?? []), ev]);
      }
      const template = templateOf(events[0]!);
      for (const [m, group] of groups) {
        signal?.throwIfAborted();
        const to = recipients(m);
        // switched off since the events were queued: nothing to send for this owner
        if (to.length > 0) await m.send({ to, ...(await templates.render(template, mailVars(group, node))) });
        for (const ev of group) sent.add(ev);
      }
    },
  };
}
