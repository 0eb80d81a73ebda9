import { clip, fieldPairs, type DeliveryContext } from '../deliveries/context.js';
import type { ActionRun, AdapterEnv, Sent } from './adapter.js';

/** One HTTP request an action makes: the payload of the HTTP action types. */
export interface HttpCall { url: string; headers: Record<string, string>; body: string }

/** The content type of JSON bodies. */
export const JSON_TYPE = { 'content-type': 'application/json' };

/** The JSON body of `webhook` and `n8n`: the Standard Webhooks envelope `{type, timestamp, data}`. */
export function webhookBody(ctx: DeliveryContext): string {
  return JSON.stringify({
    type: ctx.event,
    timestamp: new Date(ctx.timestamp * 1000).toISOString(),
    data: { form: ctx.form, submission: ctx.submission },
  });
}

/** The title line of chat messages. */
export function title(ctx: DeliveryContext): string {
  if (ctx.event === 'submission.reminder') return `Reminder: submission ${ctx.submission.id} to ${ctx.form.name} is not claimed yet`;
  return ctx.event === 'submission.claimed' ? `Submission ${ctx.submission.id} to ${ctx.form.name} was claimed by ${ctx.submission.claimed_by ?? 'someone'}`
    : ctx.event === 'action.test' ? `Test: new submission to ${ctx.form.name}` : `New submission to ${ctx.form.name}`;
}

/** `name: value` lines, each value cut to `max` characters. */
export function lines(ctx: DeliveryContext, max: number): string {
  return fieldPairs(ctx.submission.data).map(([k, v]) => `${k}: ${clip(v, max)}`).join('\n');
}

/** A header value safe to send: non-ASCII and control characters replaced (ntfy reads UTF-8 titles only RFC 2047-encoded). */
export function asciiHeader(s: string): string {
  return clip(s.replace(/[^\x20-\x7e]/g, '?'), 200);
}

/**
 * Sends the request of an HTTP action type as a POST through the guarded client (the SSRF guard,
 * no redirects, a deadline, a capped answer; docs/forms.md "Deliveries"). Throws the client's
 * `HttpRequestError` on a failure; its message never holds the URL.
 */
export async function sendHttpCall(call: HttpCall, _run: ActionRun, env: AdapterEnv, signal?: AbortSignal): Promise<Sent> {
  const res = await env.http.send({ method: 'POST', url: call.url, headers: call.headers, body: call.body, signal });
  return { status: res.status, detail: `HTTP ${res.status}` };
}
