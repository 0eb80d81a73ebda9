import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { logStopReport, stopInOrder, type StopStep } from '../../runtime/shutdown.js';

// The bounded stop sequence (runtime/shutdown.ts, docs/architecture.md "Shutdown"). The bounds are
// small here; every wait is on a promise the test controls, never on how fast the machine is,
// except that a part which never stops must be given up after its bound.

const never = () => new Promise<void>(() => {});

test('parts stop last first, each closer of a part last registered first', async () => {
  const order: string[] = [];
  const steps: StopStep[] = [
    { part: 'store', closers: [() => { order.push('store'); }] },
    { part: 'dns', closers: [() => { order.push('dns 1'); }, async () => { await Promise.resolve(); order.push('dns 2'); }] },
    { part: 'bgp', closers: [() => { order.push('bgp'); }] },
  ];
  const report = await stopInOrder(steps);
  assert.deepEqual(order, ['bgp', 'dns 2', 'dns 1', 'store']);
  assert.deepEqual(report.notStopped, []);
});

test('a part that does not stop within its bound is named, and the parts after it still stop', async () => {
  const stopped: string[] = [];
  const report = await stopInOrder([
    { part: 'store', closers: [() => { stopped.push('store'); }] },
    { part: 'forms', closers: [never] },
    { part: 'bgp', closers: [() => { stopped.push('bgp'); }] },
  ], { partMs: 50, totalMs: 60_000 });
  assert.deepEqual(report.notStopped, ['forms']);
  assert.deepEqual(stopped, ['bgp', 'store']);
});

test('the whole sequence is bounded: once the total is spent, the parts not reached are named without being run', async () => {
  let ran = false;
  const report = await stopInOrder([
    { part: 'store', closers: [() => { ran = true; }] },
    { part: 'dns', closers: [never] },
    { part: 'bgp', closers: [never] },
  ], { partMs: 60_000, totalMs: 50 });
  assert.deepEqual(report.notStopped, ['bgp', 'dns', 'store']);
  assert.equal(ran, false);
});

test('a closer that throws is reported; the rest of its part and the next parts run', async () => {
  const errors: [string, string][] = [];
  const stopped: string[] = [];
  const report = await stopInOrder([
    { part: 'store', closers: [() => { stopped.push('store'); }] },
    { part: 'alerts', closers: [() => { stopped.push('alerts 1'); }, () => { throw new Error('boom'); }] },
  ], { onError: (part, err) => errors.push([part, (err as Error).message]) });
  assert.deepEqual(errors, [['alerts', 'boom']]);
  assert.deepEqual(stopped, ['alerts 1', 'store']);
  assert.deepEqual(report.notStopped, []);
});

test('logStopReport: a warning naming each part that did not stop once, else one info line', () => {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, new Writable({ write(c: Buffer, _e, cb) { lines.push(JSON.parse(c.toString()) as Record<string, unknown>); cb(); } }));
  assert.equal(logStopReport(log, { notStopped: ['dns', 'forms', 'dns'], ms: 5001 }), false);
  assert.equal(logStopReport(log, { notStopped: [], ms: 12 }), true);
  assert.deepEqual(lines.map((l) => [l.level, l.msg, l.parts, l.ms]), [
    [40, 'shutdown: parts did not stop in time', ['dns', 'forms'], 5001],
    [30, 'stopped', undefined, 12],
  ]);
});
