import type { Config } from '../../config/types.js';
import type { MailPort } from '../../ports/mail.js';
import type { MailTemplates } from '../../mail/port.js';
import type { HttpClient } from '../../net/http-client.js';
import { FILE_TARGET_EVENTS } from '../events.js';
import type { AlertTarget } from '../target.js';
import { mailTarget } from './mail.js';
import { oncallATarget } from './oncall-a.js';
import { oncallBTarget } from './oncall-b.js';
import { webhookTarget } from './webhook.js';

/**
 * Every target of `alerts.*`, in config order: each webhook, each oncall_a and oncall_b entry,
 * and one mail target (always present: mail settings can be stored at runtime). They receive
 * health flips, GitOps rejections and rollbacks (FILE_TARGET_EVENTS), server-wide; applied
 * revisions are only for alert-target rows that ask for them.
 */
export function buildTargets(alerts: Config['alerts'], client: HttpClient, getMail: () => MailPort, templates: MailTemplates, node: string): AlertTarget[] {
  return [
    ...alerts.webhooks.map((c, i) => webhookTarget(c, i, client)),
    ...alerts.oncall_a.map((c, i) => oncallATarget(c, i, client)),
    ...alerts.oncall_b.map((c, i) => oncallBTarget(c, i, client)),
    mailTarget(getMail, templates, node),
  ].map(fileEventsOnly);
}

function fileEventsOnly(t: AlertTarget): AlertTarget {
  const inner = t.accepts?.bind(t);
  return { ...t, accepts: (ev) => FILE_TARGET_EVENTS.has(ev.type) && (inner ? inner(ev) : true) };
}
