import { escapeHtml } from '../forms/snippets.js';
import type { ActionTypeName } from '../forms/action-types.js';
import { clip, fieldPairs, type DeliveryContext } from './context.js';
import { standardWebhookHeaders } from './signing.js';

/** One HTTP request an action makes. */
export interface HttpCall { url: string; headers: Record<string, string>; body: string }

/** Third-party base URLs (`forms.services`), configurable for tests and air-gapped sites. */
export interface ServiceUrls { telegram: string }

type Config = Readonly<Record<string, unknown>>;
const str = (c: Config, k: string): string | undefined => (typeof c[k] === 'string' && c[k] !== '' ? (c[k] as string) : undefined);

/** The JSON body of `webhook` and `n8n`: the Standard Webhooks envelope `{type, timestamp, data}`. */
export function webhookBody(ctx: DeliveryContext): string {
  return JSON.stringify({
    type: ctx.event,
    timestamp: new Date(ctx.timestamp * 1000).toISOString(),
    data: { form: ctx.form, submission: ctx.submission },
  });
}

/** The title line of chat messages. */
function title(ctx: DeliveryContext): string {
  if (ctx.event === 'submission.reminder') return `Reminder: submission ${ctx.submission.id} to ${ctx.form.name} is not claimed yet`;
  return ctx.event === 'submission.claimed' ? `Submission ${ctx.submission.id} to ${ctx.form.name} was claimed by ${ctx.submission.claimed_by ?? 'someone'}`
    : ctx.event === 'action.test' ? `Test: new submission to ${ctx.form.name}` : `New submission to ${ctx.form.name}`;
}

/** `name: value` lines, each value cut to `max` characters. */
function lines(ctx: DeliveryContext, max: number): string {
  return fieldPairs(ctx.submission.data).map(([k, v]) => `${k}: ${clip(v, max)}`).join('\n');
}

const json = (body: unknown) => JSON.stringify(body);
const JSON_TYPE = { 'content-type': 'application/json' };

/**
 * The request of an HTTP action type (docs/forms.md "Deliveries"), each in its service's
 * incoming-message format. Pure: the caller sends it (through the SSRF guard).
 */
export function httpCall(type: ActionTypeName, config: Config, ctx: DeliveryContext, urls: ServiceUrls): HttpCall {
  switch (type) {
    case 'webhook': {
      const body = webhookBody(ctx);
      const extra = (config.headers ?? {}) as Record<string, string>;
      return { url: str(config, 'url')!, headers: { ...extra, ...JSON_TYPE, ...standardWebhookHeaders(ctx.deliveryId, ctx.timestamp, body, str(config, 'secret')) }, body };
    }
    case 'n8n': {
      const body = webhookBody(ctx);
      const secret = str(config, 'secret');
      return { url: str(config, 'webhook_url')!, headers: { ...JSON_TYPE, ...standardWebhookHeaders(ctx.deliveryId, ctx.timestamp, body, undefined), ...(secret ? { 'x-webhook-secret': secret } : {}) }, body };
    }
    case 'slack':
      return {
        url: str(config, 'webhook_url')!, headers: JSON_TYPE,
        body: json({
          text: title(ctx),
          blocks: [
            { type: 'header', text: { type: 'plain_text', text: clip(title(ctx), 150) } },
            ...fieldPairs(ctx.submission.data).slice(0, 45).map(([k, v]) => ({ type: 'section', text: { type: 'mrkdwn', text: clip(`*${k}*\n${v}`, 3000) } })),
          ],
        }),
      };
    case 'discord':
      return {
        url: str(config, 'webhook_url')!, headers: JSON_TYPE,
        body: json({
          ...(str(config, 'username') ? { username: str(config, 'username') } : {}),
          content: clip(title(ctx), 2000),
          allowed_mentions: { parse: [] },
          embeds: [{
            title: clip(ctx.form.name, 256),
            fields: fieldPairs(ctx.submission.data).slice(0, 25).map(([k, v]) => ({ name: clip(k, 256), value: clip(v || '—', 1024), inline: false })),
            timestamp: ctx.submission.created_at,
          }],
        }),
      };
    case 'teams':
      return {
        url: str(config, 'webhook_url')!, headers: JSON_TYPE,
        body: json({
          type: 'message',
          attachments: [{
            contentType: 'application/vnd.microsoft.card.adaptive',
            content: {
              $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4',
              body: [
                { type: 'TextBlock', text: title(ctx), weight: 'Bolder', size: 'Medium', wrap: true },
                { type: 'FactSet', facts: fieldPairs(ctx.submission.data).map(([k, v]) => ({ title: k, value: clip(v, 1000) })) },
              ],
            },
          }],
        }),
      };
    case 'telegram': {
      const text = `<b>${escapeHtml(title(ctx))}</b>\n${fieldPairs(ctx.submission.data).map(([k, v]) => `<b>${escapeHtml(k)}</b>: ${escapeHtml(v)}`).join('\n')}`;
      return {
        url: `${urls.telegram.replace(/\/+$/, '')}/bot${str(config, 'bot_token')}/sendMessage`, headers: JSON_TYPE,
        body: json({ chat_id: str(config, 'chat_id'), text: clip(text, 4096), parse_mode: 'HTML', disable_web_page_preview: true }),
      };
    }
    case 'ntfy': {
      const token = str(config, 'token');
      const priority = typeof config.priority === 'number' ? String(config.priority) : undefined;
      return {
        url: str(config, 'url')!,
        headers: { 'content-type': 'text/plain; charset=utf-8', title: asciiHeader(title(ctx)), tags: 'incoming_envelope', ...(priority ? { priority } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: clip(lines(ctx, 500), 4000),
      };
    }
    default:
      throw new Error(`action type ${type} does not make an HTTP call`);
  }
}

/** A header value safe to send: non-ASCII and control characters replaced (ntfy reads UTF-8 titles only RFC 2047-encoded). */
function asciiHeader(s: string): string {
  return clip(s.replace(/[^\x20-\x7e]/g, '?'), 200);
}
