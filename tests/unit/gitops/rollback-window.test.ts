import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadingHistory, observe, openWatch, type Watch } from '../../../gitops/rollback/window.js';
import type { Signals } from '../../../gitops/watch/signals.js';

const limits = { minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 };
const at = (t: number, over: Partial<Signals> = {}): Signals => ({ at: t, queries: 0, servfail: 0, enabled: 4, healthy: 4, ...over });
const open = (baseline: Signals, before?: Signals): Watch => openWatch({ revision: 'bad', rollbackTo: 'good', baseline, before, windowMs: 10_000, thresholds: limits });

/** Feeds readings to a watch until it ends; returns each step's kind and the last step. */
function run(w: Watch, readings: Signals[]) {
  const kinds: string[] = [];
  let last;
  for (const r of readings) {
    last = observe(w, r);
    kinds.push(last.kind);
    w = last.watch;
    if (last.kind !== 'watching') break;
  }
  return { kinds, last: last! };
}

test('a healthy baseline judges every check; the window runs from the apply', () => {
  const w = open(at(1000, { queries: 500, servfail: 5 }), at(0, { queries: 0, servfail: 0 }));
  assert.equal(w.baselineBreach, null);
  assert.deepEqual(w.thresholds, limits);
  assert.equal(w.startedAt, 1000);
  assert.equal(w.until, 11_000);
});

test('watch rows: breach, pass at the window end, baseline already in breach', () => {
  const rows: { name: string; baseline: Signals; before?: Signals; readings: Signals[]; want: string[]; breach?: RegExp }[] = [
    {
      name: 'members go down after the apply: a breach',
      baseline: at(0), readings: [at(1000), at(2000, { healthy: 1 })], want: ['watching', 'breach'],
      breach: /healthy members 1\/4 \(25%\) below minHealthyShare 50%/,
    },
    {
      name: 'SERVFAIL rate over the limit after minQueries answers: a breach',
      baseline: at(0, { queries: 1000, servfail: 10 }), readings: [at(1000, { queries: 1050, servfail: 40 }), at(2000, { queries: 1200, servfail: 60 })],
      want: ['watching', 'breach'], breach: /SERVFAIL rate 25% of 200 answers above maxServfailRate 5%/,
    },
    {
      name: 'no breach until the window ends: passed',
      baseline: at(0), readings: [at(5000, { healthy: 2 }), at(9999, { healthy: 3 }), at(10_000)], want: ['watching', 'watching', 'passed'],
    },
    {
      name: 'a breach in the last reading still counts',
      baseline: at(0), readings: [at(10_000, { healthy: 0 })], want: ['breach'],
    },
    {
      name: 'members already down at the apply: the health check is off, the window passes',
      baseline: at(0, { healthy: 1 }), readings: [at(3000, { healthy: 0 }), at(10_000, { healthy: 0 })], want: ['watching', 'passed'],
    },
    {
      name: 'members already down at the apply: the SERVFAIL rate is still judged',
      baseline: at(0, { healthy: 0 }), readings: [at(3000, { healthy: 0, queries: 200, servfail: 200 })], want: ['breach'],
      breach: /SERVFAIL rate 100% of 200 answers/,
    },
    {
      name: 'SERVFAIL rate already over the limit before the apply: that check is off',
      baseline: at(60_000, { queries: 1000, servfail: 500 }), before: at(0), readings: [at(61_000, { queries: 2000, servfail: 1500 }), at(70_000, { queries: 3000, servfail: 2500 })],
      want: ['watching', 'passed'],
    },
  ];
  for (const r of rows) {
    const got = run(open(r.baseline, r.before), r.readings);
    assert.deepEqual(got.kinds, r.want, r.name);
    if (r.breach) {
      assert.equal(got.last.kind, 'breach', r.name);
      if (got.last.kind === 'breach') assert.match(got.last.breach, r.breach, r.name);
    }
    assert.equal(got.last.watch.last?.at, r.readings[got.kinds.length - 1]!.at, `${r.name}: the last verdict is kept`);
  }
});

test('the baseline breach is stated, with the check it switched off', () => {
  const down = open(at(0, { healthy: 1 }));
  assert.match(down.baselineBreach!, /healthy members 1\/4 \(25%\) below minHealthyShare 50%/);
  assert.deepEqual(down.thresholds, { ...limits, minHealthyShare: 0 });
  const failing = open(at(30_000, { queries: 1000, servfail: 900 }), at(0));
  assert.match(failing.baselineBreach!, /SERVFAIL rate 90% of 1000 answers above maxServfailRate 5%/);
  assert.deepEqual(failing.thresholds, { ...limits, maxServfailRate: 1 });
  // without an earlier reading (just started) the rate before the apply is unknown: judged
  assert.equal(open(at(0, { queries: 1000, servfail: 900 })).baselineBreach, null);
});

test('the reading history keeps about 64 readings per window, none older than a window', () => {
  const h = new ReadingHistory(64_000);
  for (let t = 0; t <= 200_000; t += 100) h.add(at(t));
  assert.equal(h.oldestSince(200_000)?.at, 136_000);
  assert.equal(h.oldestSince(100), undefined, 'nothing that old is kept');
  const sparse = new ReadingHistory(10_000);
  sparse.add(at(0));
  sparse.add(at(30_000));
  assert.equal(sparse.oldestSince(30_000)?.at, 30_000, 'a reading older than the window is dropped');
});
