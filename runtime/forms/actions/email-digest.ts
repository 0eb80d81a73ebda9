import type { MailMessage } from '../../ports/mail.js';
import { digestMessage } from '../deliveries/digest.js';
import { defineAdapter } from './adapter.js';
import { configKey } from './config-keys.js';
import { sendMail, toKey } from './mail-message.js';

/**
 * `email_digest`: takes no delivery event; the digest runs mail each window's submissions on
 * their own schedule (deliveries/digests.ts, docs/forms.md "Digests"). Run directly (the test
 * endpoint), it mails the digest of the one sample submission, labelled `test`.
 */
export const emailDigestAdapter = defineAdapter<MailMessage>({
  type: 'email_digest', description: 'e-mails a summary of the submissions of each period',
  config: [toKey, configKey('interval', 'interval', 'hourly, daily or weekly', { required: true }), configKey('subject', 'string', 'subject line')],
  example: { to: ['team@example.com'], interval: 'daily' },
  takesEvent: () => false,
  payload: ({ config }, ctx) => digestMessage(config, ctx.form, [ctx.submission], 'test'),
  send: sendMail,
});
