import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthScheduler, SLOT_MS, type ProbeRecord } from '../../../runtime/health/scheduler.js';
import type { CheckerSet } from '../../../runtime/health/checkers/index.js';
import type { Checker, CheckResult, CheckTarget, ProbeFinish } from '../../../runtime/health/types.js';
import { HEALTHCHECK_DEFAULTS } from '../../../core/model/normalize.js';
import { checkKeyOf } from '../../../runtime/health/targets.js';
import { FakeTimers } from './fake-timers.js';

function target(ip: string, over: Partial<typeof HEALTHCHECK_DEFAULTS> = {}): CheckTarget {
  const check = { ...HEALTHCHECK_DEFAULTS, intervalMs: 1000, timeoutMs: 300, ...over };
  return { key: `p|${ip}`, poolId: 'p', ip, port: check.port, check, checkKey: checkKeyOf(check), checkId: 'hc' };
}

/** A checker whose probes resolve when the test says so, recording every start and abort. */
class ManualChecker implements Checker {
  started: { ip: string; at: number; signal: AbortSignal; resolve: (r: CheckResult) => void }[] = [];
  constructor(private readonly timers: FakeTimers) {}
  check(t: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
    return new Promise((resolve) => {
      this.started.push({ ip: t.ip, at: this.timers.t, signal, resolve });
      signal.addEventListener('abort', () => resolve({ ok: false, rttMs: 0, detail: 'timeout' }));
    });
  }
}

/** The scheduler reuses its record: keep copies. */
function copy(r: ProbeRecord): ProbeRecord {
  return { ...r, result: { ...r.result } };
}

function setup(random = 0.5) {
  const timers = new FakeTimers();
  timers.t = 1_000_000; // a slot boundary
  const checker = new ManualChecker(timers);
  const results: ProbeRecord[] = [];
  const checkers = { tcp: checker, http: checker, icmp: checker, script: checker, webhook: checker } as CheckerSet;
  const s = new HealthScheduler({ checkers, timers, random: () => random, onResult: (r) => results.push(copy(r)) });
  return { timers, checker, results, s, t0: timers.t };
}

test('scheduler: first probe after a jittered offset, then on a fixed period', async () => {
  const { timers, checker, results, s, t0 } = setup(0.25);
  s.sync(new Map([['p|127.0.0.1', target('127.0.0.1')]]));
  await timers.advance(249);
  assert.equal(checker.started.length, 0);
  await timers.advance(1);
  assert.equal(checker.started.length, 1, 'first probe at 0.25 × min(interval, 1 s)');
  checker.started[0]!.resolve({ ok: true, rttMs: 1, detail: '' });
  await timers.advance(1000);
  assert.deepEqual(checker.started.map((p) => p.at - t0), [250, 1250]);
  assert.equal(results.length, 1);
  assert.equal(results[0]!.dueAt - t0, 250);
  s.stop();
});

test('scheduler: probes due in one slot start together; times round up to the slot', async () => {
  let i = 0;
  const offsets = [0.0031, 0.0042, 0.0059, 0.0121]; // × 1000 ms → 3.1, 4.2, 5.9, 12.1 ms
  const timers = new FakeTimers();
  timers.t = 1_000_000;
  const checker = new ManualChecker(timers);
  const checkers = { tcp: checker } as unknown as CheckerSet;
  const s = new HealthScheduler({ checkers, timers, random: () => offsets[i++]!, onResult: () => {} });
  s.sync(new Map(['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'].map((ip) => [`p|${ip}`, target(ip)])));
  await timers.advance(30);
  assert.deepEqual(checker.started.map((p) => p.at - 1_000_000), [SLOT_MS, SLOT_MS, SLOT_MS, 2 * SLOT_MS]);
  s.stop();
});

test('scheduler: at most one probe in flight; the timeout aborts it and the next tick probes again', async () => {
  const { timers, checker, results, s, t0 } = setup(0);
  s.sync(new Map([['p|127.0.0.1', target('127.0.0.1', { intervalMs: 100, timeoutMs: 250 })]]));
  await timers.advance(SLOT_MS);
  assert.equal(checker.started.length, 1);
  const first = checker.started[0]!.at - t0;
  await timers.advance(200); // two ticks find the probe still running
  assert.equal(checker.started.length, 1);
  assert.equal(s.skipped, 2);
  assert.equal(checker.started[0]!.signal.aborted, false);
  await timers.advance(first + 250 - (timers.t - t0)); // the timeout
  assert.equal(checker.started[0]!.signal.aborted, true);
  assert.equal(results.length, 1);
  assert.equal(results[0]!.result.ok, false);
  await timers.advance(100);
  assert.equal(checker.started.length, 2, 'the next tick probes again');
  s.stop();
});

test('scheduler: sync adds, removes and restarts on changed settings; stale results are dropped', async () => {
  const { timers, checker, results, s } = setup(0);
  const a = target('127.0.0.1');
  const b = target('127.0.0.2');
  let res = s.sync(new Map([[a.key, a], [b.key, b]]));
  assert.deepEqual([res.added.length, res.removed.length, res.restarted.length], [2, 0, 0]);
  await timers.advance(SLOT_MS);
  assert.equal(checker.started.length, 2);
  // same settings again: nothing changes
  res = s.sync(new Map([[a.key, a], [b.key, b]]));
  assert.deepEqual([res.added.length, res.removed.length, res.restarted.length], [0, 0, 0]);
  // b removed, a's check changed
  const a2 = target('127.0.0.1', { httpPath: '/other', type: 'http' });
  res = s.sync(new Map([[a2.key, a2]]));
  assert.deepEqual(res.removed.map((t) => t.ip), ['127.0.0.2']);
  assert.deepEqual(res.restarted.map((t) => t.ip), ['127.0.0.1']);
  assert.ok(checker.started.every((p) => p.signal.aborted), 'probes of stopped runners are aborted');
  await timers.advance(SLOT_MS);
  assert.equal(results.length, 0, 'results of stopped runners are dropped');
  assert.equal(checker.started.length, 3, 'restarted target probes again');
  assert.equal(s.size, 1);
  s.stop();
  assert.equal(s.size, 0);
  const n = checker.started.length;
  await timers.advance(5000);
  assert.equal(checker.started.length, n, 'nothing runs after stop');
});

/** A checker with the direct interface (`start`/`cancel`), as the native TCP checker has. */
class DirectChecker implements Checker {
  started: { ip: string; handle: number; ctx: unknown; finish: ProbeFinish }[] = [];
  cancelled: number[] = [];
  private next = 0;
  /** when set, `start` finishes synchronously with this result (a probe that cannot start) */
  failNow: CheckResult | undefined;
  check(): Promise<CheckResult> {
    throw new Error('the scheduler must use start()');
  }
  start(t: CheckTarget, ctx: unknown, finish: ProbeFinish): number {
    if (this.failNow) {
      finish(ctx, this.failNow.ok, this.failNow.rttMs, this.failNow.detail);
      return -1;
    }
    const handle = this.next++;
    this.started.push({ ip: t.ip, handle, ctx, finish });
    return handle;
  }
  cancel(handle: number): void {
    this.cancelled.push(handle);
  }
}

test('scheduler: direct checkers report through finish; timeouts cancel; stopped targets cancel without a result', async () => {
  const timers = new FakeTimers();
  timers.t = 1_000_000;
  const checker = new DirectChecker();
  const results: ProbeRecord[] = [];
  const checkers = { tcp: checker } as unknown as CheckerSet;
  const s = new HealthScheduler({ checkers, timers, random: () => 0, onResult: (r) => results.push(copy(r)) });
  const a = target('127.0.0.1', { intervalMs: 100, timeoutMs: 250 });
  const b = target('127.0.0.2', { intervalMs: 100, timeoutMs: 250 });
  s.sync(new Map([[a.key, a], [b.key, b]]));
  await timers.advance(SLOT_MS);
  assert.equal(checker.started.length, 2);
  const [pa, pb] = checker.started;
  pa!.finish(pa!.ctx, true, 0.5, 'connected');
  assert.equal(results.length, 1);
  assert.equal(results[0]!.target.ip, '127.0.0.1');
  assert.equal(results[0]!.result.ok, true);
  pa!.finish(pa!.ctx, true, 0.5, 'connected'); // a second report is ignored
  assert.equal(results.length, 1);
  await timers.advance(260); // b times out: cancelled and reported as `timeout`
  assert.deepEqual(checker.cancelled, [pb!.handle]);
  const bt = results.find((r) => r.target.ip === '127.0.0.2');
  assert.deepEqual(bt?.result, { ok: false, rttMs: 0, detail: 'timeout' });
  pb!.finish(pb!.ctx, true, 1, 'connected'); // late: dropped
  assert.equal(results.filter((r) => r.target.ip === '127.0.0.2').length, 1);
  // a synchronous failure (EMFILE) is a result like any other
  checker.failNow = { ok: false, rttMs: 0, detail: 'connect EMFILE' };
  const before = results.length;
  await timers.advance(100);
  assert.ok(results.slice(before).some((r) => r.result.detail === 'connect EMFILE'));
  checker.failNow = undefined;
  await timers.advance(100);
  const inflight = checker.started.filter((p) => !checker.cancelled.includes(p.handle)).slice(-2);
  const n = results.length;
  s.stop();
  for (const p of inflight) assert.ok(checker.cancelled.includes(p.handle), 'stop cancels probes in flight');
  for (const p of inflight) p.finish(p.ctx, true, 1, 'connected');
  assert.equal(results.length, n, 'no result after stop');
});

test('scheduler: many targets with mixed intervals each probe on their own period; stuck probes time out', async () => {
  const timers = new FakeTimers();
  timers.t = 1_000_000;
  const checker = new DirectChecker();
  const results: ProbeRecord[] = [];
  const checkers = { tcp: checker } as unknown as CheckerSet;
  let seed = 1;
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  const s = new HealthScheduler({ checkers, timers, random, onResult: (r) => results.push(copy(r)) });
  const intervals = [100, 150, 250];
  const targets = new Map<string, CheckTarget>();
  for (let i = 0; i < 600; i++) {
    const t = target(`10.0.${i >> 8}.${i & 255}`, { intervalMs: intervals[i % 3]!, timeoutMs: 40 });
    targets.set(t.key, t);
  }
  s.sync(targets);
  // every probe answers at once, except those of 10.0.0.7 (every 150 ms), which never answer
  const answered = new Set<number>();
  for (let ms = 0; ms < 3000; ms += SLOT_MS) {
    await timers.advance(SLOT_MS);
    for (const p of checker.started) {
      if (answered.has(p.handle) || p.ip === '10.0.0.7') continue;
      answered.add(p.handle);
      p.finish(p.ctx, true, 1, 'connected');
    }
  }
  s.stop();
  const per = new Map<string, number>();
  for (const p of checker.started) per.set(p.ip, (per.get(p.ip) ?? 0) + 1);
  for (const [i, t] of [...targets.values()].entries()) {
    const want = 3000 / intervals[i % 3]!;
    const got = per.get(t.ip) ?? 0;
    assert.ok(got >= want - 2 && got <= want + 1, `${t.ip} every ${intervals[i % 3]} ms: ${got} probes, want about ${want}`);
  }
  const stuck = results.filter((r) => r.target.ip === '10.0.0.7');
  assert.ok(stuck.length >= 18 && stuck.every((r) => r.result.detail === 'timeout'), `${stuck.length} timeouts`);
  assert.equal(s.skipped, 0, 'a 40 ms timeout never overlaps a 100 ms period');
});

test('scheduler: many new targets at once start at most START_RATE a second, within the interval', async () => {
  // random 0.999: the latest offset the spread allows
  const { timers, checker, s, t0 } = setup(0.999);
  const many = (n: number, base: number, interval: number) => new Map(Array.from({ length: n }, (_, i) => {
    const ip = `10.${base}.${i >> 8}.${i & 255}`;
    return [`p|${ip}`, target(ip, { intervalMs: interval, timeoutMs: 100 })] as const;
  }));
  // 10 new targets: within 1 s (MAX_START_SPREAD_MS), as before
  s.sync(many(10, 1, 10_000));
  await timers.advance(1000);
  assert.equal(checker.started.length, 10);
  assert.ok(checker.started.every((p) => p.at - t0 <= 1000));
  // 5,000 more at once (an import): spread over 5 s at START_RATE (1,000 a second)
  const more = many(5000, 2, 10_000);
  s.sync(new Map([...many(10, 1, 10_000), ...more]));
  const t1 = timers.t;
  await timers.advance(4000);
  assert.equal(checker.started.length, 10, 'none of them by 4 s (offset 0.999 × 5 s)');
  await timers.advance(1100);
  assert.equal(checker.started.length, 5010, 'all of them by 5 s');
  assert.ok(checker.started.slice(10).every((p) => p.at - t1 > 4900 && p.at - t1 <= 5000 + SLOT_MS));
  // never beyond the interval: 8,000 targets of a 2 s check start within 2 s (not over 8 s)
  const { timers: t2, checker: c2, s: s2, t0: z } = setup(0.999);
  s2.sync(many(8000, 3, 2000));
  await t2.advance(2000 + SLOT_MS);
  assert.equal(c2.started.length, 8000);
  assert.ok(c2.started.every((p) => p.at - z <= 2000 + SLOT_MS));
  s.stop();
  s2.stop();
});
