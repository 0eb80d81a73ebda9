import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCanaryReport, parseStreamItem } from '../../../../gitops/canary/msg.js';

const plan = { revision: 'r1', origin: 'git', baseVersion: 0, changes: [], counts: { create: 0, update: 0, delete: 0 }, safety: { safe: true } };
const spec = { nodes: ['a'], bakeMs: 1000, thresholds: { minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 }, publishedAt: 1, previous: { revision: 'r0', signer: null } };
const verdict = { node: 'a', live: true, applied: true, appliedAt: 1, healthyShare: 1, servfailRate: 0, queries: 0, breach: null };
const decision = { revision: 'r1', verdict: 'abort', reason: 'node a: x', node: 'b', at: 2, verdicts: [verdict] };
const bytes = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

test('config-stream messages: plans, canary plans and decisions parse; anything else is skipped by every node alike', () => {
  const rows: { name: string; body: unknown; want: 'plan' | 'canary' | 'decision' | undefined }[] = [
    { name: 'a plan', body: { plan, node: 'a', at: 1 }, want: 'plan' },
    { name: 'a canary plan', body: { plan, node: 'a', at: 1, canary: spec, meta: { author: 'x' } }, want: 'canary' },
    { name: 'a decision', body: { decision, node: 'b', at: 2 }, want: 'decision' },
    { name: 'not JSON', body: '{', want: undefined },
    { name: 'a canary plan without nodes', body: { plan, node: 'a', at: 1, canary: { ...spec, nodes: [] } }, want: undefined },
    { name: 'a canary plan without the revision to return to', body: { plan, node: 'a', at: 1, canary: { ...spec, previous: {} } }, want: undefined },
    { name: 'meta that is not an object', body: { plan, node: 'a', at: 1, meta: 'x' }, want: undefined },
    { name: 'a decision with an unknown verdict', body: { decision: { ...decision, verdict: 'maybe' } }, want: undefined },
    { name: 'a decision with a malformed node verdict', body: { decision: { ...decision, verdicts: [{ node: 'a' }] } }, want: undefined },
  ];
  for (const r of rows) {
    const item = parseStreamItem(7, bytes(r.body));
    const got = !item ? undefined : 'decision' in item ? 'decision' : item.plan.canary ? 'canary' : 'plan';
    assert.equal(got, r.want, r.name);
    if (item) assert.equal(item.seq, 7, r.name);
  }
});

test('canary reports from heartbeats: a malformed one is not used', () => {
  const s = { at: 1, queries: 0, servfail: 0, enabled: 1, healthy: 1 };
  assert.equal(isCanaryReport({ revision: 'r1', appliedAt: 1, baseline: s, current: s }), true);
  assert.equal(isCanaryReport({ revision: 'r1', appliedAt: 1, baseline: s }), false);
  assert.equal(isCanaryReport({ revision: 'r1', appliedAt: 1, baseline: s, current: { ...s, healthy: 'all' } }), false);
  assert.equal(isCanaryReport(undefined), false);
});
