import type { Logger } from '../log/logger.js';
import { HttpRequestError, retryWithBackoff, type RetryPolicy } from '../net/http-client.js';
import type { AlertEvent } from './events.js';
import type { AlertMetrics } from './metrics.js';
import type { AlertTarget, TargetType } from './target.js';

/** The retry schedule of gslb-config-auth.md §6 and §8: three attempts, waiting 2 s then 4 s. */
export const ALERT_RETRY_DELAYS_MS: readonly number[] = [2000, 4000];

/** Targets, limits and (for tests) the retry schedule of an AlertDispatcher. */
export interface DispatcherOptions {
  targets: AlertTarget[];
  /** most events pending (queued or in flight) per target; more are dropped (default 256) */
  queueSize: number;
  log: Logger;
  metrics?: AlertMetrics;
  /** waits between attempts; default ALERT_RETRY_DELAYS_MS */
  retryDelaysMs?: readonly number[];
  /** injectable wait, for tests */
  sleep?: RetryPolicy['sleep'];
  /** at most one queue-full warning per target per interval; default 5 s */
  dropWarnIntervalMs?: number;
}

interface Worker {
  target: AlertTarget;
  queue: AlertEvent[];
  inFlight: number;
  running: boolean;
  /** drops not yet reported in a warning */
  unreported: number;
  lastWarnAt: number;
}

/**
 * Delivers alert events asynchronously. Each target has its own bounded FIFO queue and one worker,
 * so a slow or failing receiver delays only itself and events for one target stay in order
 * (trigger before resolve). A failed delivery is retried on the backoff schedule; then it is
 * logged and counted as failed. When a target already has `queueSize` events pending, new events
 * for it are dropped, counted, and reported with a (rate-limited) warning.
 */
export class AlertDispatcher {
  private readonly workers: Worker[];
  private readonly abort = new AbortController();
  private readonly delays: readonly number[];
  private readonly warnEvery: number;
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(private readonly opts: DispatcherOptions) {
    this.workers = opts.targets.map((target) => ({ target, queue: [], inFlight: 0, running: false, unreported: 0, lastWarnAt: -Infinity }));
    this.delays = opts.retryDelaysMs ?? ALERT_RETRY_DELAYS_MS;
    this.warnEvery = opts.dropWarnIntervalMs ?? 5000;
  }

  /** Queues `ev` for every target that accepts it. Never blocks and never throws. */
  enqueue(ev: AlertEvent): void {
    if (this.closed) return;
    for (const w of this.workers) {
      try {
        if (w.target.accepts && !w.target.accepts(ev)) continue;
      } catch (err) {
        this.opts.log.error({ target: w.target.name, detail: (err as Error).message }, 'alert target check failed');
        continue;
      }
      if (w.queue.length + w.inFlight >= this.opts.queueSize) {
        this.drop(w, ev);
        continue;
      }
      w.queue.push(ev);
      if (!w.running) void this.run(w);
    }
  }

  /** Pending events (queued plus in flight) per target type. */
  pending(): Map<TargetType, number> {
    const out = new Map<TargetType, number>();
    for (const w of this.workers) out.set(w.target.type, (out.get(w.target.type) ?? 0) + w.queue.length + w.inFlight);
    return out;
  }

  /** Resolves once every queue is empty and nothing is in flight (tests, shutdown). */
  idle(): Promise<void> {
    if (this.workers.every((w) => !w.running)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops accepting events, interrupts waits between retries, and drops what is still queued. */
  async close(): Promise<void> {
    this.closed = true;
    const left = this.workers.reduce((n, w) => n + w.queue.length, 0);
    for (const w of this.workers) w.queue.length = 0;
    this.abort.abort(new Error('alerts shutting down'));
    if (left) this.opts.log.warn({ events: left }, 'alert events not delivered at shutdown');
    // a request in flight gets a moment to finish; shutdown does not wait for its full timeout
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => { timer = setTimeout(r, 2000); })]);
    clearTimeout(timer);
  }

  private drop(w: Worker, ev: AlertEvent): void {
    this.opts.metrics?.dropped.inc({ target: w.target.type });
    w.unreported++;
    const now = Date.now();
    if (now - w.lastWarnAt < this.warnEvery) return;
    this.opts.log.warn({ target: w.target.name, dropped: w.unreported, queueSize: this.opts.queueSize, event: ev.type }, 'alert queue full; event dropped');
    w.unreported = 0;
    w.lastWarnAt = now;
  }

  private async run(w: Worker): Promise<void> {
    w.running = true;
    const { target } = w;
    while (w.queue.length > 0 && !this.closed) {
      // a batch holds consecutive events of one type (only the mail target takes more than one)
      let n = 1;
      while (n < target.batch && n < w.queue.length && w.queue[n]!.type === w.queue[0]!.type) n++;
      const batch = w.queue.splice(0, n);
      w.inFlight = batch.length;
      let attempts = 0;
      try {
        await retryWithBackoff(async (attempt) => { attempts = attempt; await target.deliver(batch); }, {
          delaysMs: this.delays,
          signal: this.abort.signal,
          ...(this.opts.sleep ? { sleep: this.opts.sleep } : {}),
          onRetry: (err, attempt, delayMs) => this.opts.log.warn({ target: target.name, attempt, retryInMs: delayMs, detail: this.describe(target, err) }, 'alert delivery failed; will retry'),
        });
        this.opts.metrics?.sent.inc({ target: target.type }, batch.length);
        this.opts.log.info({ target: target.name, events: batch.length, event: batch[0]!.type, attempts }, 'alert delivered');
      } catch (err) {
        if (this.closed) { w.inFlight = 0; break; }
        this.opts.metrics?.failed.inc({ target: target.type }, batch.length);
        this.opts.log.error({ target: target.name, events: batch.length, event: batch[0]!.type, attempts, detail: this.describe(target, err) }, 'alert delivery failed; giving up');
      }
      w.inFlight = 0;
    }
    w.running = false;
    if (this.workers.every((x) => !x.running)) for (const f of this.idleWaiters.splice(0)) f();
  }

  /** The error as one line, with the target's secrets scrubbed out. */
  private describe(target: AlertTarget, err: unknown): string {
    let text = (err as Error)?.message ?? String(err);
    if (err instanceof HttpRequestError && err.responseText) text += `: ${err.responseText.slice(0, 200)}`;
    for (const s of target.secrets) if (s) text = text.split(s).join('[redacted]');
    return text;
  }
}
