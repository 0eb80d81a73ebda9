import { transient, type ReconcileError } from './errors.js';
import type { ReconcileRequest } from './reconcile/context.js';
import { recordFailure, type GitOpsStatus } from './status.js';

/** What the loop runs: one reconcile at a time, and the status it reports (gitops/reconcile.ts `Reconciler`). */
export interface Reconciles {
  status: GitOpsStatus;
  reconcile(req: ReconcileRequest): Promise<Outcome>;
}

export interface LoopOptions {
  intervalMs: number;
  /** first retry delay after a transient failure; doubles per failure */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** ±fraction of each delay, so nodes polling one repo spread out */
  jitter?: number;
  random?: () => number;
}

type Outcome = { status: GitOpsStatus; error?: ReconcileError };

/**
 * Runs reconciles one at a time: at start, every `intervalMs` (with jitter), at once when triggered
 * (webhook, `gslbctl reconcile`). Triggers that arrive during a run are coalesced into one follow-up
 * run (a forced request keeps its force). Transient failures retry with exponential backoff; stalled
 * ones wait for the next poll, where an unchanged head is not re-checked.
 */
export class ReconcileLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<Outcome> | undefined;
  private queued: { req: ReconcileRequest; waiters: ((o: Outcome) => void)[] } | undefined;
  private stopped = false;
  private readonly o: Required<LoopOptions>;

  constructor(private readonly reconciler: Reconciles, opts: LoopOptions) {
    this.o = { backoffBaseMs: 1000, backoffMaxMs: 300_000, jitter: 0.1, random: Math.random, ...opts };
  }

  /** Starts polling with an immediate first reconcile. */
  start(): void {
    this.stopped = false;
    this.schedule(0, 'start');
  }

  /** Stops polling and waits for a reconcile in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** Requests a reconcile now; resolves with its outcome (a queued run when one is in flight). */
  trigger(req: ReconcileRequest): Promise<Outcome> {
    if (!this.running) return this.run(req);
    return new Promise((resolve) => {
      if (this.queued) {
        this.queued.req = { trigger: req.trigger.kind === 'webhook' ? req.trigger : this.queued.req.trigger, force: Boolean(this.queued.req.force || req.force) };
        this.queued.waiters.push(resolve);
      } else {
        this.queued = { req, waiters: [resolve] };
      }
    });
  }

  private schedule(delayMs: number, kind: 'poll' | 'start'): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const d = Math.max(0, Math.round(delayMs * (1 + this.o.jitter * (2 * this.o.random() - 1))));
    this.reconciler.status.nextAttemptAt = Date.now() + d;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.running) void this.run({ trigger: { kind, receivedAt: Date.now() } });
    }, d);
    this.timer.unref();
  }

  /** Delay before the next attempt after an outcome. */
  nextDelay(o: Outcome): number {
    if (o.error?.errorClass === 'transient') {
      const n = Math.max(1, o.status.failures);
      return Math.min(this.o.backoffMaxMs, this.o.backoffBaseMs * 2 ** (n - 1), Math.max(this.o.intervalMs, this.o.backoffBaseMs));
    }
    return this.o.intervalMs;
  }

  private async run(req: ReconcileRequest): Promise<Outcome> {
    const p = this.reconciler.reconcile(req).catch((err: unknown): Outcome => {
      // reconcile() does not throw; should it ever, the loop keeps going and retries with backoff,
      // and the status still shows the failed attempt
      const error = transient('ApplyFailed', (err as Error).message, { cause: err });
      const status = this.reconciler.status;
      status.ready = false; status.reason = error.reason; status.message = error.message; status.errorClass = error.errorClass;
      recordFailure(status, Date.now(), error);
      return { status, error };
    });
    this.running = p;
    let out: Outcome;
    try {
      out = await p;
    } finally {
      this.running = undefined;
    }
    const q = this.queued;
    this.queued = undefined;
    if (q && !this.stopped) {
      void this.run(q.req).then((o) => { for (const w of q.waiters) w(o); });
    } else {
      if (q) for (const w of q.waiters) w(out);
      this.schedule(this.nextDelay(out), 'poll');
    }
    return out;
  }
}
