import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import type { Answerer } from '../../../runtime/dns/answer.js';
import { createDispatch } from '../../../runtime/dns/dispatch.js';
import { DnsMetrics } from '../../../runtime/dns/metrics.js';

/** The facts dispatch reads from the answerer about the last query. */
function lastQuery(qtype: number, rcode: number) {
  return { lastQtype: qtype, lastRcode: rcode, lastName: 'www.example.test.', lastAnswers: [], lastEcs: () => undefined };
}

function setup(queryLog: boolean) {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => { lines.push(JSON.parse(s) as Record<string, unknown>); } });
  const metrics = new DnsMetrics();
  const a = lastQuery(1, 0);
  const d = createDispatch(a as unknown as Answerer, { deadlineMs: 200, queryLog, log, metrics });
  return { d, a, metrics, lines };
}

test('a batch: each query counted at once, the histogram gets every query with the batch time at endBatch', async () => {
  const { d, a, metrics } = setup(false);
  const t0 = performance.now();
  const rows = [{ qtype: 1, rcode: 0 }, { qtype: 28, rcode: 0 }, { qtype: 1, rcode: 3 }, { qtype: 1, rcode: -1 }];
  for (const r of rows) {
    a.lastQtype = r.qtype;
    a.lastRcode = r.rcode;
    d.count(t0, '192.0.2.1', r.rcode >= 0);
  }
  assert.deepEqual(metrics.answerTotals(), { queries: 3, servfail: 0 }, 'counted before the batch ends (dropped is not answered)');
  assert.equal(metrics.count, 0, 'no time observed yet');
  await new Promise((r) => setTimeout(r, 20));
  d.endBatch(t0);
  const since = (performance.now() - t0) / 1000;
  assert.equal(metrics.count, 4, 'every query of the batch, dropped ones included');
  const secs = metrics.sum / 4;
  // the batch's time: at least the 20 ms waited, at most the time from t0 to just after endBatch
  assert.ok(secs >= 0.015 && secs <= since, `each query got the batch's time (${secs} s of ${since} s)`);
  d.endBatch(t0);
  assert.equal(metrics.count, 4, 'an empty batch observes nothing');
  // finish (TCP, dgram) still observes one query at a time
  d.finish(performance.now(), '192.0.2.1', true);
  assert.equal(metrics.count, 5);
});

test('a batch with the query log on: one line per answered query, with its own duration', () => {
  const { d, a, lines } = setup(true);
  const t0 = performance.now();
  d.count(t0, '192.0.2.1', true);
  a.lastRcode = -1;
  d.count(t0, '192.0.2.2', false);
  d.endBatch(t0);
  const q = lines.filter((l) => l.msg === 'dns query');
  assert.equal(q.length, 1);
  assert.equal(q[0]!.src, '192.0.2.1');
  assert.equal(q[0]!.name, 'www.example.test.');
  assert.equal(typeof q[0]!.duration_us, 'number');
});
