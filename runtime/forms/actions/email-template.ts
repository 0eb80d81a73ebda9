import type { MailMessage } from '../../ports/mail.js';
import { htmlToText } from '../deliveries/templates.js';
import { configString, defineAdapter, newSubmissionsOnly } from './adapter.js';
import { configKey } from './config-keys.js';
import { deliveryVars, recipients, replyTo, replyToKey, sendMail, toKey } from './mail-message.js';

/** `email_template`: `subject` and `body` rendered as Liquid against the submission (HTML escaped by default), in the render pool as renders of the workspace. */
export const emailTemplateAdapter = defineAdapter<MailMessage>({
  type: 'email_template', description: 'e-mails each submission rendered from Liquid templates',
  config: [toKey, configKey('subject', 'string', 'Liquid template of the subject', { required: true }), configKey('body', 'string', 'Liquid template of the HTML body', { required: true }), replyToKey],
  example: { to: ['sales@example.com'], subject: 'Lead from {{ submission.name }}', body: '<p>{{ submission.message }}</p>' },
  takesEvent: newSubmissionsOnly,
  payload: async ({ tenantId, config }, ctx, env) => {
    const vars = deliveryVars(ctx);
    const html = await env.render.html(tenantId, configString(config, 'body') ?? '', vars);
    const subject = await env.render.subject(tenantId, configString(config, 'subject') ?? '', vars);
    return { to: recipients(config.to), subject, text: htmlToText(html), html, ...replyTo(config, ctx) };
  },
  send: sendMail,
});
