import { HttpRequestError } from '../../net/http-client.js';
import type { FormActionRow } from '../forms/rows.js';
import { adapterOf } from '../actions/index.js';
import { deliverWith, type AdapterEnv, type Sent, type Skip } from '../actions/adapter.js';
import type { DeliveryContext } from './context.js';

/** How one attempt ended. `retryable`: another attempt may succeed (network, timeout, 408, 429, 5xx, mail server errors). */
export interface SendOutcome { ok: boolean; status: number | null; detail: string; retryable: boolean; durationMs: number }

/** What the sender needs: the guarded HTTP client, a workspace's mailer, the service URLs, the template renderer. */
export type SenderDeps = AdapterEnv;

/** One error as an outcome; secrets of the action never appear (the URL of a request is not in its message). */
function failure(err: unknown, started: number): SendOutcome {
  const durationMs = Date.now() - started;
  if (err instanceof HttpRequestError) return { ok: false, status: err.status ?? null, detail: err.message, retryable: err.retryable, durationMs };
  const e = err as Error & { permanent?: boolean };
  return { ok: false, status: null, detail: e.message, retryable: !e.permanent, durationMs };
}

/** A run's ending as an outcome: a skipped payload is a failure no retry mends. */
function outcome(r: Sent | Skip, started: number): SendOutcome {
  const durationMs = Date.now() - started;
  if ('skip' in r) return { ok: false, status: null, detail: r.skip, retryable: false, durationMs };
  return { ok: true, status: r.status, detail: r.detail, retryable: false, durationMs };
}

/**
 * Performs one attempt of an action for one submission (docs/forms.md "Deliveries") through its
 * type's adapter (runtime/forms/actions/): HTTP types through the guarded client (no redirects,
 * a deadline, a capped answer), e-mail types through the workspace's mail settings, `sheets`
 * through the Sheets API. Never throws: every ending is an outcome the worker records.
 */
export class ActionSender {
  constructor(private readonly deps: SenderDeps) {}

  /** A delivery. `signal` aborts an HTTP attempt (a stopping worker); mail goes on to its own deadline. */
  async send(action: FormActionRow, ctx: DeliveryContext, signal?: AbortSignal): Promise<SendOutcome> {
    const started = Date.now();
    try {
      return outcome(await deliverWith(adapterOf(action.type), action, ctx, this.deps, signal), started);
    } catch (err) {
      return failure(err, started);
    }
  }

  /** A run of the test endpoint on sample data (`ctx.event` is `action.test`); like {@link send}, never throws. */
  async test(action: FormActionRow, ctx: DeliveryContext, signal?: AbortSignal): Promise<SendOutcome> {
    const started = Date.now();
    try {
      return outcome(await adapterOf(action.type).test(action, ctx, this.deps, signal), started);
    } catch (err) {
      return failure(err, started);
    }
  }
}
