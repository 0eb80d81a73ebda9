import type { Logger } from '../../log/logger.js';
import type { FormActionRow, FormRow } from '../forms/rows.js';
import type { SubmissionRecord } from '../submissions/types.js';
import { submissionView } from '../submissions/views.js';
import type { DeliveryContext, DeliveryEvent } from './context.js';
import type { DeliveryRow, DeliveryState, Outbox, SettledDelivery } from './outbox.js';
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
  /** in a cluster: which node sends a delivery that every node holds (docs/forms.md "In a cluster") */
  gate?: DeliveryGate;
}

/**
 * One sender at a time for a delivery every node of a cluster holds (its `cluster_key`): the
 * worker asks before an attempt and tells after it.
 */
export interface DeliveryGate {
  /**
   * Whether this node sends the delivery now: `go`, or not before `until` (another node holds it),
   * or never again (another node settled it: `sent` or `failed`). Rejects when the cluster cannot
   * tell (the row waits for the next look).
   */
  take(row: DeliveryRow, now: number): Promise<{ go: true } | { go: false; state: DeliveryState; until: number }>;
  /** The attempt ended with the row in `settled`: the other nodes learn it, and no node sends it before `settled.nextAt` (never, when sent or failed). */
  done(row: DeliveryRow, settled: SettledDelivery): Promise<void>;
}

/** How long a delivery the cluster could not decide on waits before the next look. */
const GATE_RETRY_MS = 1_000;

/** How long a stop lets attempts in flight finish before it aborts them. */
export const STOP_GRACE_MS = 2_000;

/** The context of a queued delivery: its form, its submission as the API shows it, its event. */
export function deliveryContext(row: Pick<DeliveryRow, 'id' | 'event' | 'cluster_key'>, form: FormRow, s: SubmissionRecord, now: number): DeliveryContext {
  const v = submissionView(s);
  return {
    deliveryId: `dlv_${row.cluster_key ?? row.id}`, event: row.event as DeliveryEvent, form: { id: form.id, name: form.name },
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
  private gate: DeliveryGate | undefined;
  /** aborted when a stop's grace ends; a fresh one per start */
  private abort = new AbortController();

  constructor(private readonly deps: WorkerDeps) {
    this.now = deps.now ?? Date.now;
    this.gate = deps.gate;
  }

  /** In a cluster: from now on, deliveries every node holds are sent by the node the gate chooses. */
  useGate(gate: DeliveryGate): void {
    this.gate = gate;
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
    const gate = row.cluster_key === null ? undefined : this.gate;
    if (gate && !(await this.mayGo(gate, row))) return;
    if (!action.enabled) return this.settle(row, gate, 'failed', 'the action is disabled', null, this.now(), 0, 0);
    const signal = this.abort.signal;
    const out = await this.deps.send(action, deliveryContext(row, form, sub, this.now()), signal);
    // aborted by a stop: the row stays `sending` and is due again at the next start (recover); its
    // attempt, still open, is marked interrupted then
    if (signal.aborted) return;
    const now = this.now();
    if (out.ok) {
      this.settle(row, gate, 'sent', null, out.status, now, now, out.durationMs);
      outbox.noteSuccess(action.id);
      return;
    }
    const delays = this.deps.settings().retryDelaysMs;
    const delay = delays[row.attempts - 1];
    if (out.retryable && delay !== undefined) this.settle(row, gate, 'retrying', out.detail, out.status, now + delay, now, out.durationMs);
    else this.settle(row, gate, 'failed', out.detail, out.status, now, now, out.durationMs);
    this.deps.log.warn({ delivery: row.id, action: action.id, type: action.type, attempt: row.attempts, detail: out.detail }, 'form delivery attempt failed');
    const run = outbox.noteFailure(action.id, out.detail);
    if (run >= this.deps.settings().pauseAfterFailures && outbox.notePaused(action.id, now)) this.deps.pause(action, run, out.detail);
  }

  /** Asks the cluster whether this node sends the row now; a row it does not send is given back as the cluster says. */
  private async mayGo(gate: DeliveryGate, row: DeliveryRow): Promise<boolean> {
    const now = this.now();
    try {
      const g = await gate.take(row, now);
      if (g.go) return true;
      // a delivery never attempted yet stays pending while another node holds it
      this.deps.outbox.untake(row.id, g.state === 'retrying' && row.attempts <= 1 ? 'pending' : g.state, g.until, this.now());
    } catch (err) {
      this.deps.log.warn({ err, delivery: row.cluster_key }, 'the cluster could not tell which node sends a form delivery; looking again soon');
      this.deps.outbox.untake(row.id, row.attempts > 1 ? 'retrying' : 'pending', now + GATE_RETRY_MS, this.now());
    }
    return false;
  }

  /** Settles the row here and, in a cluster, tells the other nodes (sent and failed: nobody sends it again; retrying: not before `at`). */
  private settle(row: DeliveryRow, gate: DeliveryGate | undefined, state: SettledDelivery['state'], error: string | null, status: number | null, at: number, now: number, durationMs: number): void {
    const { outbox } = this.deps;
    if (state === 'sent') outbox.sent(row.id, status, now, durationMs);
    else if (state === 'retrying') outbox.retryAt(row.id, error!, status, at, now, durationMs);
    else outbox.failed(row.id, error!, status, now, durationMs);
    if (!gate) return;
    const settled: SettledDelivery = { state, attempts: row.attempts, status, error, nextAt: at, sentAt: state === 'sent' ? now : null };
    gate.done(row, settled).catch((err: unknown) => this.deps.log.warn({ err, delivery: row.cluster_key }, 'the cluster could not be told how a form delivery ended; its lease runs out instead'));
  }
}
