import type { MailPort } from '../../mail/port.js';
import type { MailTemplates } from '../../mail/templates.js';
import type { AlertEvent } from '../events.js';
import type { AlertTarget } from '../target.js';

/** Template variables for a group of events of one type (docs/alerts.md lists them). */
export function mailVars(events: AlertEvent[], node: string): Record<string, unknown> {
  return {
    node,
    count: events.length,
    down: events.filter((e) => e.type === 'health_transition' && !e.healthy).length,
    up: events.filter((e) => e.type === 'health_transition' && e.healthy).length,
    events: events.map((e) => ({ ...e, time: new Date(e.timestamp).toISOString(), ...(e.type === 'gitops_rejected' ? { shortRevision: e.revision.slice(0, 12) } : {}) })),
  };
}

/**
 * The mail target: sends to the `to` recipients of the active mail settings, read at delivery
 * time so PUT /settings/smtp applies at once. Takes up to 50 queued events of one type per
 * message, so a burst of flips becomes a few mails rather than hundreds.
 */
export function mailTarget(getMail: () => MailPort, templates: MailTemplates, node: string): AlertTarget {
  const recipients = () => {
    const m = getMail();
    return m.configured() ? m.alertRecipients?.() ?? [] : [];
  };
  return {
    type: 'mail',
    name: 'mail',
    batch: 50,
    secrets: [],
    accepts: () => recipients().length > 0,
    async deliver(events) {
      const to = recipients();
      if (to.length === 0) return; // switched off since the event was queued
      const template = events[0]!.type === 'health_transition' ? 'alert-health' : 'alert-gitops';
      const body = await templates.render(template, mailVars(events, node));
      await getMail().send({ to, ...body });
    },
  };
}
