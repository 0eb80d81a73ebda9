import type { MailMessage } from '../../ports/mail.js';
import { htmlToText } from '../deliveries/templates.js';
import { configString, defineAdapter, newSubmissionsOnly } from './adapter.js';
import { configKey } from './config-keys.js';
import { addressIn, deliveryVars, sendMail } from './mail-message.js';

/**
 * `autoreply`: the rendered templates to the visitor's address in `email_field`; a submission
 * without a valid address there is skipped (a permanent failure naming the field).
 */
export const autoreplyAdapter = defineAdapter<MailMessage>({
  type: 'autoreply', description: 'answers the visitor by e-mail',
  config: [
    configKey('email_field', 'string', "submission field holding the visitor's address", { required: true }),
    configKey('subject', 'string', 'Liquid template of the subject', { required: true }),
    configKey('body', 'string', 'Liquid template of the HTML body', { required: true }),
    configKey('from_name', 'string', 'sender name shown to the visitor'),
  ],
  example: { email_field: 'email', subject: 'Thanks, {{ submission.name }}', body: '<p>We will get back to you soon.</p>', from_name: 'Example Inc.' },
  takesEvent: newSubmissionsOnly,
  payload: async ({ tenantId, config }, ctx, env) => {
    const vars = deliveryVars(ctx);
    const html = await env.render.html(tenantId, configString(config, 'body') ?? '', vars);
    const subject = await env.render.subject(tenantId, configString(config, 'subject') ?? '', vars);
    const to = addressIn(ctx, configString(config, 'email_field'));
    if (!to) return { skip: `no e-mail address in field ${configString(config, 'email_field')}` };
    const fromName = configString(config, 'from_name');
    return { to: [to], subject, text: htmlToText(html), html, ...(fromName ? { fromName } : {}) };
  },
  send: sendMail,
});
