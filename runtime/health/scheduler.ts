import type { CheckerSet } from './checkers/index.js';
import type { CheckResult, CheckTarget } from './types.js';

/** Timer functions, injectable so tests can drive the scheduler with a fake clock. */
export interface Timers {
  now: () => number;
  set: (fn: () => void, ms: number) => unknown;
  clear: (handle: unknown) => void;
  /** runs `fn` after the I/O that is already waiting has been handled (setImmediate) */
  defer: (fn: () => void) => void;
}

/** The real clock and timers. Timers are unref'd: probes never keep the process alive. */
export const REAL_TIMERS: Timers = {
  now: Date.now,
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
  defer: (fn) => { setImmediate(fn); },
};

/** One finished probe, as delivered to `onResult`. */
export interface ProbeRecord {
  target: CheckTarget;
  result: CheckResult;
  /** when the probe was due */
  dueAt: number;
  startedAt: number;
  finishedAt: number;
}

export interface SchedulerDeps {
  checkers: CheckerSet;
  onResult: (rec: ProbeRecord) => void;
  timers?: Timers;
  /** random source in [0, 1) for the first probe's offset */
  random?: () => number;
}

/** Longest initial offset: new targets start within this, or within the interval when shorter. */
export const MAX_START_SPREAD_MS = 1000;
/**
 * New targets started per second at most, when many arrive at once (a large git import): their
 * first probes are spread over `added / START_RATE` seconds (within the interval) instead of 1 s,
 * so 40,000 new members do not all probe, and write their first result, in the same second on the
 * thread that answers DNS; their later probes keep that phase, spread over the interval.
 */
export const START_RATE = 1000;
/**
 * Granularity of the scheduler's wheel. Probes and timeouts due in the same slot run in one timer
 * callback, so thousands of targets cost one wake-up per slot instead of two timers per probe, and
 * their connects complete in batches. Probe times and timeouts are rounded up to the slot.
 */
export const SLOT_MS = 10;

interface Runner {
  target: CheckTarget;
  stopped: boolean;
  dueAt: number;
  /** sequence number of the probe in flight, 0 when none */
  inflight: number;
  /** the probe in flight: its abort (Promise checkers) or its handle (checkers with `start`) */
  abort: AbortController | undefined;
  handle: number;
  /** the probe in flight: target, due time and start time, for its ProbeRecord */
  probeTarget: CheckTarget;
  probeDueAt: number;
  probeStartedAt: number;
}

/** A wheel entry: a runner's next tick, or (seq > 0) the deadline of its probe `seq`. */
type Entry = { runner: Runner; seq: number };

/** What `sync` changed, so the caller can reset or drop endpoint state. */
export interface SyncResult {
  added: CheckTarget[];
  removed: CheckTarget[];
  restarted: CheckTarget[];
}

/**
 * Runs one periodic probe loop per target on a timing wheel of SLOT_MS slots. Each target's first
 * probe is due after a random offset in [0, min(interval, MAX_START_SPREAD_MS)) so thousands of
 * targets do not probe in step (over a longer spread when more than START_RATE start at once); after that probes are due on a fixed period (a slow probe does not
 * push the schedule back). At most one probe per target is in flight: a tick that finds one still
 * running is skipped. Each probe gets an AbortSignal that fires after timeoutMs (rounded up to the
 * slot). Results of a stopped or restarted target are dropped. The wheel's timer runs only while
 * something is scheduled.
 */
export class HealthScheduler {
  private readonly runners = new Map<string, Runner>();
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly buckets = new Map<number, Entry[]>();
  /** last slot processed */
  private cursor = 0;
  private wheel: unknown = undefined;
  /** the slot the wheel's timer is armed for */
  private armedSlot = 0;
  /** true while `turn` runs: it arms the wheel itself once done */
  private turning = false;
  /** ticks skipped because the previous probe of the target was still running */
  skipped = 0;
  /** last probe sequence number */
  private seq = 0;

  constructor(private readonly deps: SchedulerDeps) {
    this.timers = deps.timers ?? REAL_TIMERS;
    this.random = deps.random ?? Math.random;
  }

  get size(): number {
    return this.runners.size;
  }

  /** The targets being probed. */
  targets(): IterableIterator<CheckTarget> {
    const it = this.runners.values();
    return (function* () { for (const r of it) yield r.target; })();
  }

  /**
   * Makes the running set equal `desired`: starts new targets, stops those no longer desired and
   * restarts those whose check settings (`checkKey`) or port changed. Idempotent.
   */
  sync(desired: ReadonlyMap<string, CheckTarget>): SyncResult {
    const out: SyncResult = { added: [], removed: [], restarted: [] };
    let fresh = 0;
    for (const key of desired.keys()) if (!this.runners.has(key)) fresh++;
    const spread = Math.max(MAX_START_SPREAD_MS, Math.ceil((fresh * 1000) / START_RATE));
    for (const [key, r] of this.runners) {
      if (!desired.has(key)) {
        this.stopRunner(r);
        this.runners.delete(key);
        out.removed.push(r.target);
      }
    }
    for (const [key, t] of desired) {
      const r = this.runners.get(key);
      if (!r) {
        this.startRunner(t, spread);
        out.added.push(t);
      } else if (r.target.checkKey !== t.checkKey || r.target.port !== t.port) {
        this.stopRunner(r);
        this.startRunner(t, spread);
        out.restarted.push(t);
      } else {
        r.target = t; // same settings; keep the schedule, pick up the new row identity
      }
    }
    return out;
  }

  /** Stops every target and aborts probes in flight. */
  stop(): void {
    for (const r of this.runners.values()) this.stopRunner(r);
    this.runners.clear();
    this.buckets.clear();
    if (this.wheel !== undefined) this.timers.clear(this.wheel);
    this.wheel = undefined;
  }

  private startRunner(target: CheckTarget, spread: number): void {
    const now = this.timers.now();
    const offset = Math.floor(this.random() * Math.min(target.check.intervalMs, spread));
    const r: Runner = {
      target, stopped: false, dueAt: now + offset, inflight: 0, abort: undefined, handle: -1,
      probeTarget: target, probeDueAt: 0, probeStartedAt: 0,
    };
    this.runners.set(target.key, r);
    this.enqueue(r.dueAt, { runner: r, seq: 0 });
  }

  private stopRunner(r: Runner): void {
    r.stopped = true; // its wheel entries are skipped when their slot comes
    if (r.inflight !== 0) this.cancel(r);
    r.inflight = 0;
  }

  /** Puts an entry in the slot of `at` (never in a slot already processed) and arms the wheel. */
  private enqueue(at: number, e: Entry): void {
    if (this.wheel === undefined && this.buckets.size === 0) this.cursor = Math.floor(this.timers.now() / SLOT_MS);
    const slot = Math.max(Math.ceil(at / SLOT_MS), this.cursor + 1);
    const b = this.buckets.get(slot);
    if (b) b.push(e);
    else this.buckets.set(slot, [e]);
    if (this.turning) return;
    if (this.wheel !== undefined && slot < this.armedSlot) {
      this.timers.clear(this.wheel); // armed for a later slot: wake up earlier
      this.wheel = undefined;
    }
    if (this.wheel === undefined) this.arm(slot);
  }

  private arm(slot: number): void {
    this.armedSlot = slot;
    this.wheel = this.timers.set(this.turn, Math.max(0, slot * SLOT_MS - this.timers.now()));
  }

  /** Runs every slot up to now, then re-arms for the next slot while anything is scheduled. */
  private readonly turn = (): void => {
    this.wheel = undefined;
    this.turning = true;
    const nowSlot = Math.floor(this.timers.now() / SLOT_MS);
    const expired: Entry[] = [];
    while (this.cursor < nowSlot && this.buckets.size > 0) {
      const slot = ++this.cursor;
      const b = this.buckets.get(slot);
      if (!b) continue;
      this.buckets.delete(slot);
      for (const e of b) {
        if (e.runner.stopped) continue;
        if (e.seq !== 0) {
          if (e.runner.inflight === e.seq) expired.push(e);
        } else {
          this.tick(e.runner);
        }
      }
    }
    this.cursor = Math.max(this.cursor, nowSlot);
    this.turning = false;
    // Deadlines are enforced after the poll phase: a probe that completed while the event loop was
    // busy is counted as completed, not as a timeout, so a loaded daemon does not mark healthy
    // endpoints down.
    if (expired.length > 0) {
      this.timers.defer(() => {
        for (const e of expired) {
          const r = e.runner;
          if (r.stopped || r.inflight !== e.seq) continue;
          if (r.abort) {
            r.abort.abort(); // the checker resolves with its own `timeout` result
          } else {
            this.cancel(r);
            this.finish(r, TIMEOUT);
          }
        }
      });
    }
    // Sleep until the earliest slot with entries (at most interval / SLOT_MS keys to scan).
    let next = Infinity;
    for (const slot of this.buckets.keys()) if (slot < next) next = slot;
    if (next !== Infinity) this.arm(Math.max(next, this.cursor + 1));
  };

  private tick(r: Runner): void {
    const now = this.timers.now();
    const dueAt = r.dueAt;
    const interval = Math.max(1, r.target.check.intervalMs);
    r.dueAt += interval;
    if (r.dueAt <= now) r.dueAt = now + interval; // the loop fell behind: skip, do not burst
    this.enqueue(r.dueAt, { runner: r, seq: 0 });
    if (r.inflight !== 0) {
      this.skipped++;
      return;
    }
    this.probe(r, dueAt, now);
  }

  /**
   * Starts a probe. Checkers with `start` (the native TCP checker) report through `finish` with
   * the runner as context: no Promise, AbortController or closure per probe.
   */
  private probe(r: Runner, dueAt: number, startedAt: number): void {
    const seq = ++this.seq;
    const target = r.target;
    r.inflight = seq;
    r.probeTarget = target;
    r.probeDueAt = dueAt;
    r.probeStartedAt = startedAt;
    r.abort = undefined;
    r.handle = -1;
    this.enqueue(startedAt + Math.max(1, target.check.timeoutMs), { runner: r, seq });
    const checker = this.deps.checkers[target.check.type];
    if (!checker) return this.finish(r, { ok: false, rttMs: 0, detail: `unknown check type ${String(target.check.type)}` });
    if (checker.start && checker.cancel) {
      const handle = checker.start(target, r, this.finish);
      if (r.inflight === seq) r.handle = handle; // not finished synchronously
      return;
    }
    const ac = new AbortController();
    r.abort = ac;
    const done = (result: CheckResult) => {
      if (r.inflight === seq) this.finish(r, result); // else stale: stopped, restarted or timed out
    };
    checker.check(target, ac.signal).then(done, (err: unknown) => done({ ok: false, rttMs: 0, detail: String(err) }));
  }

  /** Ends the runner's probe in flight with `result`. */
  private readonly finish = (r: Runner, result: CheckResult): void => {
    if (r.stopped || r.inflight === 0) return;
    r.inflight = 0;
    r.abort = undefined;
    r.handle = -1;
    this.deps.onResult({ target: r.probeTarget, result, dueAt: r.probeDueAt, startedAt: r.probeStartedAt, finishedAt: this.timers.now() });
  };

  /** Stops the runner's probe in flight without a result. */
  private cancel(r: Runner): void {
    if (r.abort) r.abort.abort();
    else if (r.handle >= 0) this.deps.checkers[r.probeTarget.check.type]?.cancel?.(r.handle);
    r.abort = undefined;
    r.handle = -1;
  }
}

const TIMEOUT: CheckResult = Object.freeze({ ok: false, rttMs: 0, detail: 'timeout' });
