import type { CheckerSet } from './checkers/index.js';
import type { CheckResult, CheckTarget } from './types.js';

export { REAL_TIMERS, type Timers } from '../timers.js';
import { REAL_TIMERS, type Timers } from '../timers.js';

/**
 * One finished probe, as delivered to `onResult`. The scheduler reuses the record and its `result`
 * for the next probe: read them during the call, copy what must be kept.
 */
export interface ProbeRecord {
  target: CheckTarget;
  result: CheckResult;
  /** when the probe was due */
  dueAt: number;
  startedAt: number;
  finishedAt: number;
  /**
   * A value the consumer may set during `onResult`; the scheduler hands it back with every later
   * record of the same probe loop and forgets it when the loop stops or restarts (the monitor
   * keeps its per-target state there instead of looking it up per probe).
   */
  tag: unknown;
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
  /** ProbeRecord.tag of this loop */
  tag: unknown;
}

/**
 * The entries of one wheel slot, as parallel arrays so that scheduling allocates nothing: a
 * runner's next tick (seq 0) or the deadline of its probe `seq`. Buckets are recycled.
 */
interface Bucket {
  runners: (Runner | undefined)[];
  seqs: number[];
  n: number;
}

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
  private readonly buckets = new Map<number, Bucket>();
  private readonly spare: Bucket[] = [];
  /**
   * The last bucket ticks and deadlines were put in: the probes of one slot all schedule their next
   * tick in one later slot and their deadlines in another, so nearly every enqueue skips the map.
   */
  private tickSlot = -1;
  private tickBucket: Bucket | undefined;
  private deadlineSlot = -1;
  private deadlineBucket: Bucket | undefined;
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
  /** the record handed to `onResult`, reused (a nested call gets its own) */
  private readonly rec: ProbeRecord = { target: undefined as unknown as CheckTarget, result: { ok: false, rttMs: 0, detail: '' }, dueAt: 0, startedAt: 0, finishedAt: 0, tag: undefined };
  private reporting = false;

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
    this.forgetCached();
    if (this.wheel !== undefined) this.timers.clear(this.wheel);
    this.wheel = undefined;
  }

  private startRunner(target: CheckTarget, spread: number): void {
    const now = this.timers.now();
    const offset = Math.floor(this.random() * Math.min(target.check.intervalMs, spread));
    const r: Runner = {
      target, stopped: false, dueAt: now + offset, inflight: 0, abort: undefined, handle: -1,
      probeTarget: target, probeDueAt: 0, probeStartedAt: 0, tag: undefined,
    };
    this.runners.set(target.key, r);
    this.enqueue(r.dueAt, r, 0);
  }

  private stopRunner(r: Runner): void {
    r.stopped = true; // its wheel entries are skipped when their slot comes
    if (r.inflight !== 0) this.cancel(r);
    r.inflight = 0;
  }

  /** Puts an entry in the slot of `at` (never in a slot already processed) and arms the wheel. */
  private enqueue(at: number, runner: Runner, seq: number): void {
    if (this.wheel === undefined && this.buckets.size === 0) this.cursor = Math.floor(this.timers.now() / SLOT_MS);
    const slot = Math.max(Math.ceil(at / SLOT_MS), this.cursor + 1);
    let b = seq === 0 ? (slot === this.tickSlot ? this.tickBucket : undefined) : (slot === this.deadlineSlot ? this.deadlineBucket : undefined);
    if (!b) {
      b = this.buckets.get(slot);
      if (!b) {
        b = this.spare.pop() ?? { runners: [], seqs: [], n: 0 };
        this.buckets.set(slot, b);
      }
      if (seq === 0) {
        this.tickSlot = slot;
        this.tickBucket = b;
      } else {
        this.deadlineSlot = slot;
        this.deadlineBucket = b;
      }
    }
    b.runners[b.n] = runner;
    b.seqs[b.n++] = seq;
    if (this.turning) return;
    if (this.wheel !== undefined && slot < this.armedSlot) {
      this.timers.clear(this.wheel); // armed for a later slot: wake up earlier
      this.wheel = undefined;
    }
    if (this.wheel === undefined) this.arm(slot);
  }

  private forgetCached(): void {
    this.tickSlot = this.deadlineSlot = -1;
    this.tickBucket = this.deadlineBucket = undefined;
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
    let expired: Runner[] | undefined;
    let expiredSeqs: number[] | undefined;
    while (this.cursor < nowSlot && this.buckets.size > 0) {
      const slot = ++this.cursor;
      const b = this.buckets.get(slot);
      if (!b) continue;
      this.buckets.delete(slot);
      if (slot === this.tickSlot || slot === this.deadlineSlot) this.forgetCached(); // the bucket is recycled
      for (let i = 0; i < b.n; i++) {
        const r = b.runners[i]!;
        const seq = b.seqs[i]!;
        b.runners[i] = undefined;
        if (r.stopped) continue;
        if (seq !== 0) {
          if (r.inflight === seq) {
            (expired ??= []).push(r);
            (expiredSeqs ??= []).push(seq);
          }
        } else {
          this.tick(r);
        }
      }
      b.n = 0;
      this.spare.push(b);
    }
    this.cursor = Math.max(this.cursor, nowSlot);
    this.turning = false;
    // Deadlines are enforced after the poll phase: a probe that completed while the event loop was
    // busy is counted as completed, not as a timeout, so a loaded daemon does not mark healthy
    // endpoints down.
    if (expired && expiredSeqs) {
      const runners = expired;
      const seqs = expiredSeqs;
      this.timers.defer(() => {
        for (let i = 0; i < runners.length; i++) {
          const r = runners[i]!;
          if (r.stopped || r.inflight !== seqs[i]) continue;
          if (r.abort) {
            r.abort.abort(); // the checker resolves with its own `timeout` result
          } else {
            this.cancel(r);
            this.finish(r, false, 0, 'timeout');
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
    this.enqueue(r.dueAt, r, 0);
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
    this.enqueue(startedAt + Math.max(1, target.check.timeoutMs), r, seq);
    const checker = this.deps.checkers[target.check.type];
    if (!checker) return this.finish(r, false, 0, `unknown check type ${String(target.check.type)}`);
    if (checker.start && checker.cancel) {
      const handle = checker.start(target, r, this.finish);
      if (r.inflight === seq) r.handle = handle; // not finished synchronously
      return;
    }
    const ac = new AbortController();
    r.abort = ac;
    const done = (result: CheckResult) => {
      if (r.inflight === seq) this.finish(r, result.ok, result.rttMs, result.detail); // else stale: stopped, restarted or timed out
    };
    checker.check(target, ac.signal).then(done, (err: unknown) => done({ ok: false, rttMs: 0, detail: String(err) }));
  }

  /** Ends the runner's probe in flight with the result's fields. */
  private readonly finish = (r: Runner, ok: boolean, rttMs: number, detail: string): void => {
    if (r.stopped || r.inflight === 0) return;
    r.inflight = 0;
    r.abort = undefined;
    r.handle = -1;
    const nested = this.reporting;
    const rec: ProbeRecord = nested ? { target: r.probeTarget, result: { ok, rttMs, detail }, dueAt: 0, startedAt: 0, finishedAt: 0, tag: undefined } : this.rec;
    rec.target = r.probeTarget;
    rec.result.ok = ok;
    rec.result.rttMs = rttMs;
    rec.result.detail = detail;
    rec.dueAt = r.probeDueAt;
    rec.startedAt = r.probeStartedAt;
    rec.finishedAt = this.timers.now();
    rec.tag = r.tag;
    this.reporting = true;
    try {
      this.deps.onResult(rec);
    } finally {
      this.reporting = nested;
      r.tag = rec.tag;
      rec.tag = undefined;
    }
  };

  /** Stops the runner's probe in flight without a result. */
  private cancel(r: Runner): void {
    if (r.abort) r.abort.abort();
    else if (r.handle >= 0) this.deps.checkers[r.probeTarget.check.type]?.cancel?.(r.handle);
    r.abort = undefined;
    r.handle = -1;
  }
}
