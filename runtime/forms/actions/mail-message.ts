import { escapeHtml } from '../forms/snippets.js';
import type { MailMessage } from '../../ports/mail.js';
import { fieldPairs, fieldText, type DeliveryContext } from '../deliveries/context.js';
import { templateVars } from '../deliveries/templates.js';
import { configKey, type ConfigKey } from './config-keys.js';
import type { ActionConfig, ActionRun, AdapterEnv, Sent } from './adapter.js';

/** `config.to` of the e-mail types: one address or a list. */
export const toKey: ConfigKey = configKey('to', 'emails', 'recipients: one address or a list', { required: true });
/** `config.reply_to_field` of the e-mail types that write to the team. */
export const replyToKey: ConfigKey = configKey('reply_to_field', 'string', 'submission field whose value becomes Reply-To');

/** The recipients of `config.to`: one address or a list. */
export const recipients = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? (v as string[]) : []);

const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The address in a submission field, or undefined. */
export function addressIn(ctx: DeliveryContext, field: string | undefined): string | undefined {
  if (!field) return undefined;
  const v = ctx.submission.data[field];
  const a = v === undefined ? '' : fieldText(v).trim();
  return ADDRESS.test(a) && !/[\r\n]/.test(a) ? a : undefined;
}

/** The built-in message of the `email` action: every field in a table. */
export function summary(ctx: DeliveryContext): { text: string; html: string } {
  const pairs = fieldPairs(ctx.submission.data);
  const files = ctx.submission.files.map((f) => `${f.name} (${f.size} bytes)`);
  const text = [`New submission to ${ctx.form.name} (#${ctx.submission.id ?? 'test'}, ${ctx.submission.created_at})`, '', ...pairs.map(([k, v]) => `${k}: ${v}`), ...(files.length ? ['', `Files: ${files.join(', ')}`] : [])].join('\n');
  const rows = pairs.map(([k, v]) => `<tr><th align="left" valign="top">${escapeHtml(k)}</th><td>${escapeHtml(v).replace(/\n/g, '<br>')}</td></tr>`).join('');
  const html = `<p>New submission to <b>${escapeHtml(ctx.form.name)}</b></p><table cellpadding="4">${rows}</table>${files.length ? `<p>Files: ${escapeHtml(files.join(', '))}</p>` : ''}`;
  return { text, html };
}

/** The variables a Liquid template of an action sees for a delivery (docs/forms.md "Templates"). */
export const deliveryVars = (ctx: DeliveryContext): Record<string, unknown> => templateVars(ctx.form, ctx.submission.data, ctx.submission.id, ctx.submission.created_at);

/** Reply-To from `config.reply_to_field`, when that field of the submission holds an address. */
export const replyTo = (config: ActionConfig, ctx: DeliveryContext): { replyTo?: string } => {
  const a = addressIn(ctx, typeof config.reply_to_field === 'string' && config.reply_to_field !== '' ? config.reply_to_field : undefined);
  return a ? { replyTo: a } : {};
};

/** Sends the message of an e-mail type through the workspace's mail settings. Throws the mail server's error. */
export async function sendMail(msg: MailMessage, run: ActionRun, env: AdapterEnv): Promise<Sent> {
  const r = await env.mailer(run.tenantId).send(msg);
  return { status: null, detail: `accepted by the mail server for ${r.accepted.join(', ')}` };
}
