import { setMaxListeners } from 'node:events';
import type { Logger } from '../log/logger.js';
import { HttpRequestError, retryWithBackoff, type RetryPolicy } from '../net/http-client.js';
import type { AlertEvent } from './events.js';
import type { AlertMetrics } from './metrics.js';
import type { AlertTarget, TargetType } from './target.js';

/**
 * The retry schedule of gslb-config-auth.md §6 and §8, "retried up to 3 times": the first attempt
 * plus three retries, waiting 2 s, 4 s and 8 s (exponential), so at most four attempts.
 */
export const ALERT_RETRY_DELAYS_MS: readonly number[] = [2000, 4000, 8000];

/** Targets, limits and (for tests) the retry schedule of an AlertDispatcher. */
export interface DispatcherOptions {
  targets: AlertTarget[];
  /** targets that change at run time (alert-target rows), each with a `key`; read at every event */
  moreTargets?: () => readonly AlertTarget[];
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
  /** how long `close` lets deliveries in flight finish before cutting them off; default 2 s */
  closeGraceMs?: number;
}

interface Worker {
  target: AlertTarget;
  /** map key: target index and lane */
  key: string;
  queue: AlertEvent[];
  inFlight: number;
  running: boolean;
  /** drops not yet reported in a warning */
  unreported: number;
  lastWarnAt: number;
}

/**
 * Delivers alert events asynchronously. Each target (and each lane of a target that reaches
 * several receivers, see AlertTarget.lane) has its own bounded FIFO queue and one worker, so a
 * slow or failing receiver delays only itself and events for one receiver stay in order (trigger
 * before resolve). A failed delivery is retried on the backoff schedule; then it is logged and
 * counted as failed. When a queue already has `queueSize` events pending, new events for it are
 * dropped, counted, and reported with a (rate-limited) warning.
 */
export class AlertDispatcher {
  /** created on the first event of a target and lane; removed again once drained */
  private readonly workers = new Map<string, Worker>();
  /** aborted when `close` starts: no more waits between retries */
  private readonly stopWaits = new AbortController();
  /** aborted when the close grace ends: deliveries still in flight are cut off */
  private readonly stopDeliveries = new AbortController();
  private readonly delays: readonly number[];
  private readonly warnEvery: number;
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  /** events queued with a `done` callback: how many target lanes still hold each */
  private readonly pendingDone = new Map<AlertEvent, { left: number; done: () => void }>();

  constructor(private readonly opts: DispatcherOptions) {
    // every delivery in flight listens on these (one per target and lane; alert-target rows make many)
    setMaxListeners(0, this.stopWaits.signal, this.stopDeliveries.signal);
    this.delays = opts.retryDelaysMs ?? ALERT_RETRY_DELAYS_MS;
    this.warnEvery = opts.dropWarnIntervalMs ?? 5000;
  }

  /**
   * Queues `ev` for every target that accepts it. Never blocks and never throws. `done` runs once
   * every target it was queued for delivered it, gave up or dropped it (at once when none took it);
   * never for events still queued or in flight at `close` (the persisted queue keeps those).
   */
  enqueue(ev: AlertEvent, done?: () => void): void {
    if (this.closed) return;
    const track = done ? { left: 0, done } : undefined;
    if (track) this.pendingDone.set(ev, track);
    const more = this.opts.moreTargets?.() ?? [];
    [...this.opts.targets, ...more].forEach((target, i) => {
      let lane: string;
      try {
        if (target.accepts && !target.accepts(ev)) return;
        lane = target.lane?.(ev) ?? '';
      } catch (err) {
        this.opts.log.error({ target: target.name, detail: (err as Error).message }, 'alert target check failed');
        return;
      }
      const w = this.workerFor(target, `${target.key ?? i}\u0000${lane}`);
      if (w.queue.length + w.inFlight >= this.opts.queueSize) {
        this.drop(w, ev);
        return;
      }
      w.queue.push(ev);
      if (track) track.left++;
      if (!w.running) void this.run(w);
    });
    if (track && track.left === 0) { track.left = 1; this.settle(ev); }
  }

  /** One lane is done with `ev`; the last one runs its `done`. */
  private settle(ev: AlertEvent): void {
    const t = this.pendingDone.get(ev);
    if (!t || --t.left > 0) return;
    this.pendingDone.delete(ev);
    try { t.done(); } catch (err) { this.opts.log.error({ err }, 'alert done callback failed'); }
  }

  private workerFor(target: AlertTarget, key: string): Worker {
    let w = this.workers.get(key);
    if (!w) {
      w = { target, key, queue: [], inFlight: 0, running: false, unreported: 0, lastWarnAt: -Infinity };
      this.workers.set(key, w);
    }
    return w;
  }

  /** Pending events (queued plus in flight) per target type. */
  pending(): Map<TargetType, number> {
    const out = new Map<TargetType, number>();
    for (const t of this.opts.targets) out.set(t.type, 0); // drained lanes are gone; their type reads 0
    for (const w of this.workers.values()) out.set(w.target.type, (out.get(w.target.type) ?? 0) + w.queue.length + w.inFlight);
    return out;
  }

  /** Resolves once every queue is empty and nothing is in flight (tests, shutdown). */
  idle(): Promise<void> {
    if (this.allIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops accepting events, interrupts waits between retries, and drops what is still queued.
   * Deliveries in flight get `closeGraceMs` to finish and are then aborted, so a receiver that
   * never answers cannot hold up shutdown for its whole request deadline.
   */
  async close(): Promise<void> {
    this.closed = true;
    let left = 0;
    for (const w of this.workers.values()) { left += w.queue.length; w.queue.length = 0; }
    this.stopWaits.abort(new Error('alerts shutting down'));
    if (left) this.opts.log.warn({ events: left }, 'alert events not delivered at shutdown');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => { timer = setTimeout(r, this.opts.closeGraceMs ?? 2000); })]);
    clearTimeout(timer);
    // Not awaited: a target that ignores the signal settles on its own deadline, and shutdown
    // does not wait for it.
    this.stopDeliveries.abort(new Error('alerts shutting down'));
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
        await retryWithBackoff(async (attempt) => { attempts = attempt; await target.deliver(batch, this.stopDeliveries.signal); }, {
          delaysMs: this.delays,
          signal: this.stopWaits.signal,
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
      for (const ev of batch) this.settle(ev);
    }
    w.running = false;
    // a lane exists only while it has work (lanes may be many, e.g. one per tenant)
    if (w.queue.length === 0 && w.unreported === 0) this.workers.delete(w.key);
    if (this.allIdle()) for (const f of this.idleWaiters.splice(0)) f();
  }

  private allIdle(): boolean {
    for (const w of this.workers.values()) if (w.running) return false;
    return true;
  }

  /** The error as one line, with the target's secrets scrubbed out. */
  private describe(target: AlertTarget, err: unknown): string {
    let text = (err as Error)?.message ?? String(err);
    if (err instanceof HttpRequestError && err.responseText) text += `: ${err.responseText.slice(0, 200)}`;
    for (const s of target.secrets) if (s) text = text.split(s).join('[redacted]');
    return text;
  }
}
