import type { Config } from '../../config/types.js';
import type { MailPort } from '../../ports/mail.js';
import { HttpRequestError, type HttpClient } from '../../net/http-client.js';
import type { FormActionRow } from '../forms/rows.js';
import type { DeliveryContext } from './context.js';
import { digestMessage } from './digest.js';
import { httpCall } from './http-payloads.js';
import { mailMessage } from './mail-payloads.js';
import type { TemplateRenderer } from './templates.js';
import { appendRow } from './sheets.js';

/** How one attempt ended. `retryable`: another attempt may succeed (network, timeout, 408, 429, 5xx, mail server errors). */
export interface SendOutcome { ok: boolean; status: number | null; detail: string; retryable: boolean; durationMs: number }

/** What the sender needs: the guarded HTTP client, a workspace's mailer, the service URLs, the template renderer. */
export interface SenderDeps {
  http: HttpClient;
  render: TemplateRenderer;
  mailer: (tenantId: string) => MailPort;
  services: () => Config['forms']['services'];
}

/** One error as an outcome; secrets of the action never appear (the URL of a request is not in its message). */
function failure(err: unknown, started: number): SendOutcome {
  const durationMs = Date.now() - started;
  if (err instanceof HttpRequestError) return { ok: false, status: err.status ?? null, detail: err.message, retryable: err.retryable, durationMs };
  const e = err as Error & { permanent?: boolean };
  return { ok: false, status: null, detail: e.message, retryable: !e.permanent, durationMs };
}

/**
 * Performs one attempt of an action for one submission (docs/forms.md "Deliveries"): HTTP types
 * through the guarded client (no redirects, a deadline, a capped answer), e-mail types through
 * the workspace's mail settings, `sheets` through the Sheets API. Never throws: every ending is an
 * outcome the worker records.
 */
export class ActionSender {
  constructor(private readonly deps: SenderDeps) {}

  /** `signal` aborts an HTTP attempt (a stopping worker); mail goes on to its own deadline. */
  async send(action: FormActionRow, ctx: DeliveryContext, signal?: AbortSignal): Promise<SendOutcome> {
    const started = Date.now();
    try {
      switch (action.type) {
        case 'email': case 'email_template': case 'autoreply': {
          const msg = await mailMessage(action.type, action.config, ctx, this.deps.render, action.tenantId);
          if ('skip' in msg) return { ok: false, status: null, detail: msg.skip, retryable: false, durationMs: Date.now() - started };
          const r = await this.deps.mailer(action.tenantId).send(msg);
          return { ok: true, status: null, detail: `accepted by the mail server for ${r.accepted.join(', ')}`, retryable: false, durationMs: Date.now() - started };
        }
        case 'email_digest': {
          const r = await this.deps.mailer(action.tenantId).send(digestMessage(action.config, ctx.form, [ctx.submission], 'test'));
          return { ok: true, status: null, detail: `accepted by the mail server for ${r.accepted.join(', ')}`, retryable: false, durationMs: Date.now() - started };
        }
        case 'sheets': {
          const status = await appendRow(this.deps.http, this.deps.services(), action.config, ctx, signal);
          return { ok: true, status, detail: `row appended (HTTP ${status})`, retryable: false, durationMs: Date.now() - started };
        }
        default: {
          const call = httpCall(action.type, action.config, ctx, { telegram: this.deps.services().telegramURL });
          const res = await this.deps.http.send({ method: 'POST', url: call.url, headers: call.headers, body: call.body, signal });
          return { ok: true, status: res.status, detail: `HTTP ${res.status}`, retryable: false, durationMs: Date.now() - started };
        }
      }
    } catch (err) {
      return failure(err, started);
    }
  }
}
