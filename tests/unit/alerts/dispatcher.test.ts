import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { AlertDispatcher } from '../../../runtime/alerts/dispatcher.js';
import type { AlertEvent } from '../../../runtime/alerts/events.js';
import { createAlertMetrics } from '../../../runtime/alerts/metrics.js';
import type { AlertTarget, TargetType } from '../../../runtime/alerts/target.js';
import { HttpRequestError } from '../../../runtime/net/http-client.js';
import { settlesBeforeHang, waitUntil } from '../../helpers/wait.js';

function logSink() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({ write(chunk, _e, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l)); cb(); } });
  return { log: pino({ level: 'debug' }, stream), lines };
}

const ev = (i: number, healthy = false): AlertEvent => ({ type: 'health_transition', poolId: 'p', ipAddress: `10.0.0.${i}`, healthy, timestamp: 1000 * i, node: 'n', score: 0, rttMs: 0 });

/** A target whose deliver outcome is scripted per call. */
function fakeTarget(type: TargetType, outcome: (call: number, events: AlertEvent[]) => Promise<void> | void, batch = 1, secrets: string[] = []) {
  const calls: AlertEvent[][] = [];
  const target: AlertTarget = { type, name: `${type}[0]`, batch, secrets, async deliver(events) { calls.push(events); await outcome(calls.length, events); } };
  return { target, calls };
}

async function metricValue(reg: Registry, name: string, target: string): Promise<number> {
  const m = (await reg.getMetricsAsJSON()).find((x) => x.name === name);
  return (m?.values.find((v) => v.labels.target === target)?.value as number | undefined) ?? 0;
}

function setup(targets: AlertTarget[], queueSize = 256) {
  const { log, lines } = logSink();
  const waits: number[] = [];
  const reg = new Registry();
  let d!: AlertDispatcher;
  const metrics = createAlertMetrics(reg, () => d.pending());
  d = new AlertDispatcher({ targets, queueSize, log, metrics, sleep: async (ms) => { waits.push(ms); } });
  return { d, lines, waits, reg };
}

test('fails three times then succeeds: exactly one success after waits of 2 s, 4 s and 8 s', async () => {
  const t = fakeTarget('webhook', (n) => { if (n <= 3) throw new HttpRequestError('answered 500', { status: 500, retryable: true }); });
  const { d, waits, reg, lines } = setup([t.target]);
  d.enqueue(ev(1));
  await d.idle();
  assert.equal(t.calls.length, 4);
  assert.deepEqual(waits, [2000, 4000, 8000]);
  assert.equal(await metricValue(reg, 'gslbd_alerts_sent_total', 'webhook'), 1);
  assert.equal(await metricValue(reg, 'gslbd_alerts_failed_total', 'webhook'), 0);
  assert.equal(lines.filter((l) => l.msg === 'alert delivery failed; will retry').length, 3);
});

test('always failing: four attempts (three retries), one logged failure, secrets scrubbed', async () => {
  const t = fakeTarget('oncall_a', () => { throw new HttpRequestError('answered 500', { status: 500, retryable: true, responseText: 'bad key rk-secret' }); }, 1, ['rk-secret']);
  const { d, waits, reg, lines } = setup([t.target]);
  d.enqueue(ev(1));
  await d.idle();
  assert.equal(t.calls.length, 4);
  assert.deepEqual(waits, [2000, 4000, 8000]);
  assert.equal(await metricValue(reg, 'gslbd_alerts_failed_total', 'oncall_a'), 1);
  const fail = lines.filter((l) => l.msg === 'alert delivery failed; giving up');
  assert.equal(fail.length, 1);
  assert.equal(fail[0]!.attempts, 4);
  assert.ok(!JSON.stringify(lines).includes('rk-secret'));
  assert.match(String(fail[0]!.detail), /\[redacted\]/);
});

test('a 4xx answer is not retried', async () => {
  const t = fakeTarget('oncall_b', () => { throw new HttpRequestError('answered 422', { status: 422, retryable: false }); });
  const { d, waits } = setup([t.target]);
  d.enqueue(ev(1));
  await d.idle();
  assert.equal(t.calls.length, 1);
  assert.deepEqual(waits, []);
});

test('a stuck target does not delay another; per-target order is kept', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const slow = fakeTarget('webhook', () => gate);
  const fast = fakeTarget('oncall_a', () => {});
  const { d } = setup([slow.target, fast.target]);
  d.enqueue(ev(1));
  d.enqueue(ev(1, true));
  for (let i = 0; i < 20 && fast.calls.length < 2; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(fast.calls.map((c) => c[0]!.type === 'health_transition' && c[0]!.healthy), [false, true], 'fast target got both, in order');
  assert.equal(slow.calls.length, 1, 'slow target still on its first event');
  release();
  await d.idle();
  assert.deepEqual(slow.calls.map((c) => c[0]!.type === 'health_transition' && c[0]!.healthy), [false, true]);
});

test('queue bound: events beyond queueSize pending are dropped with one warning and counted', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const t = fakeTarget('webhook', () => gate);
  const { d, reg, lines } = setup([t.target], 5);
  for (let i = 1; i <= 12; i++) d.enqueue(ev(i));
  assert.equal(d.pending().get('webhook'), 5);
  assert.equal(await metricValue(reg, 'gslbd_alerts_dropped_total', 'webhook'), 7);
  assert.equal(await metricValue(reg, 'gslbd_alerts_queued', 'webhook'), 5);
  const warns = lines.filter((l) => l.msg === 'alert queue full; event dropped');
  assert.equal(warns.length, 1, 'rate-limited warning');
  assert.equal(warns[0]!.level, 40);
  release();
  await d.idle();
  assert.deepEqual(t.calls.map((c) => (c[0] as { ipAddress: string }).ipAddress), ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5']);
});

test('batching target takes consecutive events of one type', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const t = fakeTarget('mail', (n) => (n === 1 ? gate : undefined), 50);
  const { d } = setup([t.target]);
  d.enqueue(ev(1));
  for (let i = 2; i <= 4; i++) d.enqueue(ev(i));
  d.enqueue({ type: 'gitops_rejected', revision: 'r', reason: 'X', message: 'm', timestamp: 0, node: 'n' });
  d.enqueue(ev(5));
  release();
  await d.idle();
  assert.deepEqual(t.calls.map((c) => c.length), [1, 3, 1, 1]);
});

test('targets that do not accept an event never queue it', async () => {
  const t = fakeTarget('mail', () => {});
  t.target.accepts = () => false;
  const { d } = setup([t.target]);
  d.enqueue(ev(1));
  await d.idle();
  assert.equal(t.calls.length, 0);
});

test('close interrupts a retry wait and drops the queue', async () => {
  const { log } = logSink();
  const t = fakeTarget('webhook', () => { throw new HttpRequestError('answered 500', { status: 500, retryable: true }); });
  // waits, and a grace for deliveries in flight, of ten minutes: close ends only through the
  // interrupted wait, and only a close that did not interrupt it could reach the ceiling
  const d = new AlertDispatcher({ targets: [t.target], queueSize: 10, log, retryDelaysMs: [600_000, 600_000], closeGraceMs: 600_000 });
  d.enqueue(ev(1));
  d.enqueue(ev(2));
  await waitUntil('the first attempt', () => t.calls.length === 1);
  await settlesBeforeHang('close during a retry wait', d.close());
  assert.equal(t.calls.length, 1);
  d.enqueue(ev(3));
  assert.equal(t.calls.length, 1);
});

test('lanes: a stuck receiver of one lane does not delay another lane of the same target; order kept per lane', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const t = fakeTarget('mail', (_n, events) => ((events[0] as { poolId: string }).poolId === 'stuck' ? gate : undefined));
  t.target.lane = (e) => (e as { poolId: string }).poolId;
  const { d, reg } = setup([t.target]);
  const on = (poolId: string, healthy: boolean): AlertEvent => ({ ...ev(1, healthy), poolId } as AlertEvent);
  d.enqueue(on('stuck', false));
  d.enqueue(on('ok', false));
  d.enqueue(on('stuck', true));
  d.enqueue(on('ok', true));
  for (let i = 0; i < 20 && t.calls.length < 3; i++) await new Promise((r) => setImmediate(r));
  const seen = (pool: string) => t.calls.flat().filter((e) => (e as { poolId: string }).poolId === pool).map((e) => (e as { healthy: boolean }).healthy);
  assert.deepEqual(seen('ok'), [false, true], 'the other lane got both events, in order');
  assert.deepEqual(seen('stuck'), [false], 'the stuck lane is still on its first event');
  assert.equal(await metricValue(reg, 'gslbd_alerts_queued', 'mail'), 2);
  release();
  await d.idle();
  assert.deepEqual(seen('stuck'), [false, true]);
  assert.equal(await metricValue(reg, 'gslbd_alerts_queued', 'mail'), 0, 'drained lanes read 0');
});

test('close aborts a delivery still in flight after the grace period', async () => {
  const { log } = logSink();
  let aborted = false;
  const target: AlertTarget = {
    type: 'webhook', name: 'webhook[0]', batch: 1, secrets: [],
    deliver: (_events, signal) => new Promise((_resolve, reject) => {
      signal?.addEventListener('abort', () => { aborted = true; reject(signal.reason); }, { once: true });
    }),
  };
  const d = new AlertDispatcher({ targets: [target], queueSize: 10, log, closeGraceMs: 50 });
  d.enqueue(ev(1));
  // the receiver never answers: only the abort can end the delivery, so close must not wait for it
  await settlesBeforeHang('close with a delivery in flight', d.close());
  assert.ok(aborted, 'the receiver that never answers was cut off');
  await d.idle();
});
