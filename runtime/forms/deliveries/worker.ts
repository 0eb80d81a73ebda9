import type { Logger } from '../../log/logger.js';
import type { FormActionRow, FormRow } from '../forms/rows.js';
import type { SubmissionRecord } from '../submissions/types.js';
import { submissionView } from '../submissions/views.js';
import type { DeliveryContext, DeliveryEvent } from './context.js';
import type { DeliveryRow, Outbox } from './outbox.js';
import type { SendOutcome } from './sender.js';

/** What the worker reads and calls. */
export interface WorkerDeps {
  outbox: Outbox;
  action: (id: string) => FormActionRow | undefined;
  form: (id: string) => FormRow | undefined;
  submission: (formId: string, id: number) => SubmissionRecord | undefined;
  /** one attempt; `signal` aborts when the worker stops (its outcome is then not recorded) */
  send: (action: FormActionRow, ctx: DeliveryContext, signal: AbortSignal) => Promise<SendOutcome>;
  /** pauses an action that keeps failing and tells its workspace */
  pause: (action: FormActionRow, failures: number, lastError: string) => void;
  settings: () => { pollIntervalMs: number; concurrency: number; retryDelaysMs: readonly number[]; pauseAfterFailures: number };
  log: Logger;
  now?: () => number;
  /** how long `stop` lets attempts in flight finish before aborting them (default STOP_GRACE_MS) */
  stopGraceMs?: number;
}

/** How long a stop lets attempts in flight finish before it aborts them. */
export const STOP_GRACE_MS = 2_000;

/** The context of a queued delivery: its form, its submission as the API shows it, its event. */
export function deliveryContext(row: Pick<DeliveryRow, 'id' | 'event'>, form: FormRow, s: SubmissionRecord, now: number): DeliveryContext {
  const v = submissionView(s);
  return {
    deliveryId: `dlv_${row.id}`, event: row.event as DeliveryEvent, form: { id: form.id, name: form.name },
    submission: { id: v.id, created_at: v.created_at, data: v.data, files: v.files, claimed_by: v.claimed_by },
    timestamp: Math.floor(now / 1000),
  };
}

/**
 * The delivery worker (docs/forms.md "Deliveries"): takes due rows of the queue (up to
 * `concurrency` in flight), performs each attempt, and settles the row: sent; retrying after the
 * next of `retryDelaysMs` when the failure may pass; failed when it cannot or the delays are used
 * up. A run of `pauseAfterFailures` failed attempts of one action pauses it. Rows whose action or
 * submission is gone are dropped; a disabled action's rows fail with that reason (retry re-queues
 * them once it is enabled). `kick()` looks at once (a new submission); otherwise every
 * `pollIntervalMs`. `stop` gives the attempts in flight `stopGraceMs`, then aborts them: a
 * receiver that holds a request open cannot hold up shutdown for the whole request deadline. An
 * aborted attempt leaves its row `sending`; at the next start, rows left in flight by a stop are
 * due again.
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /** between start() and stop(): kicks and ticks do nothing otherwise */
  private running = false;
  private readonly now: () => number;
  /** aborted when a stop's grace ends; a fresh one per start */
  private abort = new AbortController();

  constructor(private readonly deps: WorkerDeps) {
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    this.running = true;
    this.abort = new AbortController();
    const n = this.deps.outbox.recover(this.now());
    if (n > 0) this.deps.log.info({ deliveries: n }, 'form deliveries that were in flight at the last stop are queued again');
    this.schedule(0);
  }

  /** Looks for due deliveries now. */
  kick(): void {
    if (this.running) this.schedule(0);
  }

  /**
   * Stops taking rows and waits for the attempts in flight, `stopGraceMs` at most; then aborts
   * them and returns without waiting further. An HTTP attempt ends at once; one that does not
   * heed the signal (a mail server that never answers) ends on its own deadline, and its outcome
   * is not recorded: after the abort an attempt touches neither the queue nor the database.
   */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), this.deps.stopGraceMs ?? STOP_GRACE_MS); });
    const first = await Promise.race([Promise.all(this.inFlight), grace]);
    clearTimeout(timer);
    if (first !== 'late') return;
    this.deps.log.warn({ deliveries: this.inFlight.size }, 'form deliveries in flight aborted at shutdown; they are sent again at the next start');
    this.abort.abort(new Error('gslbd is shutting down'));
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    if (!this.running) return;
    const s = this.deps.settings();
    const free = s.concurrency - this.inFlight.size;
    if (free > 0) {
      for (const row of this.deps.outbox.take(this.now(), free)) {
        const p = this.attempt(row).catch((err) => this.deps.log.error({ err, delivery: row.id }, 'form delivery failed unexpectedly')).finally(() => {
          this.inFlight.delete(p);
          this.kick();
        });
        this.inFlight.add(p);
      }
    }
    if (!this.timer) this.schedule(s.pollIntervalMs);
  }

  private async attempt(row: DeliveryRow): Promise<void> {
    const { outbox } = this.deps;
    const action = this.deps.action(row.action_id);
    const form = this.deps.form(row.form_id);
    const sub = form && this.deps.submission(row.form_id, row.submission_id);
    if (!action || !form || !sub) return outbox.drop(row.id);
    if (row.event === 'submission.reminder' && sub.claimedAt !== null) return outbox.drop(row.id); // claiming stops reminders
    if (!action.enabled) return outbox.failed(row.id, 'the action is disabled', null, this.now(), 0);
    const signal = this.abort.signal;
    const out = await this.deps.send(action, deliveryContext(row, form, sub, this.now()), signal);
    // aborted by a stop: the row stays `sending` and is due again at the next start (recover); its
    // attempt, still open, is marked interrupted then
    if (signal.aborted) return;
    const now = this.now();
    if (out.ok) {
      outbox.sent(row.id, out.status, now, out.durationMs);
      outbox.noteSuccess(action.id);
      return;
    }
    const delays = this.deps.settings().retryDelaysMs;
    const delay = delays[row.attempts - 1];
    if (out.retryable && delay !== undefined) outbox.retryAt(row.id, out.detail, out.status, now + delay, now, out.durationMs);
    else outbox.failed(row.id, out.detail, out.status, now, out.durationMs);
    this.deps.log.warn({ delivery: row.id, action: action.id, type: action.type, attempt: row.attempts, detail: out.detail }, 'form delivery attempt failed');
    const run = outbox.noteFailure(action.id, out.detail);
    if (run >= this.deps.settings().pauseAfterFailures && outbox.notePaused(action.id, now)) this.deps.pause(action, run, out.detail);
  }
}
