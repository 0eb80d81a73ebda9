import type { MailMessage } from '../../ports/mail.js';
import { configString, defineAdapter } from './adapter.js';
import { configKey } from './config-keys.js';
import { recipients, replyTo, replyToKey, sendMail, summary, toKey } from './mail-message.js';

/** `email`: every field in a table to `to`; also the reminders of unclaimed submissions (docs/forms.md "Reminders"). */
export const emailAdapter = defineAdapter<MailMessage>({
  type: 'email', description: 'e-mails each submission to the given addresses',
  config: [toKey, configKey('subject', 'string', 'subject line; default "New submission: <form name>"'), replyToKey],
  example: { to: ['team@example.com'], subject: 'New contact request', reply_to_field: 'email' },
  takesEvent: (_config, event) => event === 'submission.created' || event === 'submission.reminder',
  payload: ({ config }, ctx) => {
    const { text, html } = summary(ctx);
    const subject = ctx.event === 'submission.reminder' ? `Reminder: submission #${ctx.submission.id} to ${ctx.form.name} is not claimed yet` : configString(config, 'subject') ?? `New submission: ${ctx.form.name}`;
    return { to: recipients(config.to), subject: subject.replace(/[\r\n]+/g, ' '), text, html, ...replyTo(config, ctx) };
  },
  send: sendMail,
});
