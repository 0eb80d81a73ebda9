import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judge, type Signals } from '../../../gitops/watch/signals.js';

const at = (over: Partial<Signals>): Signals => ({ at: 0, queries: 0, servfail: 0, enabled: 10, healthy: 10, ...over });
const limits = { minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 };

test('within the thresholds: no breach', () => {
  const v = judge(at({ queries: 1000, servfail: 10 }), at({ queries: 2000, servfail: 20, healthy: 5 }), limits);
  assert.equal(v.breach, null);
  assert.equal(v.healthyShare, 0.5);
  assert.equal(v.queries, 1000);
  assert.equal(v.servfailRate, 0.01);
});

test('healthy share below the minimum is a breach naming both numbers', () => {
  const v = judge(at({}), at({ healthy: 4 }), limits);
  assert.match(v.breach!, /healthy members 4\/10 \(40%\) below minHealthyShare 50%/);
});

test('the SERVFAIL rate counts only answers since the baseline, and only past minQueries', () => {
  assert.equal(judge(at({ queries: 5000, servfail: 5000 }), at({ queries: 5099, servfail: 5099 }), limits).breach, null);
  const v = judge(at({ queries: 5000, servfail: 5000 }), at({ queries: 5100, servfail: 5006 }), limits);
  assert.match(v.breach!, /SERVFAIL rate 6% of 100 answers above maxServfailRate 5%/);
});

test('no enabled member counts as healthy; a rate limit of 1 never breaches', () => {
  const v = judge(at({ enabled: 0, healthy: 0 }), at({ enabled: 0, healthy: 0, queries: 1000, servfail: 1000 }), { ...limits, maxServfailRate: 1 });
  assert.equal(v.healthyShare, 1);
  assert.equal(v.breach, null);
});
