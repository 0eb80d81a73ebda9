import { escapeHtml } from '../forms/snippets.js';
import type { MailMessage } from '../../mail/port.js';
import { fieldPairs, fieldText, type DeliveryContext } from './context.js';
import { htmlToText, templateVars, type TemplateRenderer } from './templates.js';

type Config = Readonly<Record<string, unknown>>;
const str = (c: Config, k: string): string | undefined => (typeof c[k] === 'string' && c[k] !== '' ? (c[k] as string) : undefined);
const list = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? (v as string[]) : []);
const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The address in a submission field, or undefined. */
function addressIn(ctx: DeliveryContext, field: string | undefined): string | undefined {
  if (!field) return undefined;
  const v = ctx.submission.data[field];
  const a = v === undefined ? '' : fieldText(v).trim();
  return ADDRESS.test(a) && !/[\r\n]/.test(a) ? a : undefined;
}

/** The built-in message of the `email` action: every field in a table. */
function summary(ctx: DeliveryContext): { text: string; html: string } {
  const pairs = fieldPairs(ctx.submission.data);
  const files = ctx.submission.files.map((f) => `${f.name} (${f.size} bytes)`);
  const text = [`New submission to ${ctx.form.name} (#${ctx.submission.id ?? 'test'}, ${ctx.submission.created_at})`, '', ...pairs.map(([k, v]) => `${k}: ${v}`), ...(files.length ? ['', `Files: ${files.join(', ')}`] : [])].join('\n');
  const rows = pairs.map(([k, v]) => `<tr><th align="left" valign="top">${escapeHtml(k)}</th><td>${escapeHtml(v).replace(/\n/g, '<br>')}</td></tr>`).join('');
  const html = `<p>New submission to <b>${escapeHtml(ctx.form.name)}</b></p><table cellpadding="4">${rows}</table>${files.length ? `<p>Files: ${escapeHtml(files.join(', '))}</p>` : ''}`;
  return { text, html };
}

/**
 * The message of an e-mail action type, or a reason it cannot be sent (an autoreply without a
 * valid address in its field). `email` lists the fields; `email_template` and `autoreply` render
 * their Liquid templates against the submission (HTML escaped by default) in the render pool, as
 * renders of `tenant` (docs/forms.md "Templates").
 */
export async function mailMessage(type: 'email' | 'email_template' | 'autoreply', config: Config, ctx: DeliveryContext, render: TemplateRenderer, tenant: string): Promise<MailMessage | { skip: string }> {
  const vars = templateVars(ctx.form, ctx.submission.data, ctx.submission.id, ctx.submission.created_at);
  const replyTo = addressIn(ctx, str(config, 'reply_to_field'));
  if (type === 'email') {
    const { text, html } = summary(ctx);
    const subject = ctx.event === 'submission.reminder' ? `Reminder: submission #${ctx.submission.id} to ${ctx.form.name} is not claimed yet` : str(config, 'subject') ?? `New submission: ${ctx.form.name}`;
    return { to: list(config.to), subject: subject.replace(/[\r\n]+/g, ' '), text, html, ...(replyTo ? { replyTo } : {}) };
  }
  const html = await render.html(tenant, str(config, 'body') ?? '', vars);
  const subject = await render.subject(tenant, str(config, 'subject') ?? '', vars);
  if (type === 'email_template') return { to: list(config.to), subject, text: htmlToText(html), html, ...(replyTo ? { replyTo } : {}) };
  const to = addressIn(ctx, str(config, 'email_field'));
  if (!to) return { skip: `no e-mail address in field ${str(config, 'email_field')}` };
  return { to: [to], subject, text: htmlToText(html), html, ...(str(config, 'from_name') ? { fromName: str(config, 'from_name')! } : {}) };
}
