import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideCanary, type NodeReport } from '../../../../gitops/canary/decide.js';
import type { CanarySpec } from '../../../../gitops/canary/msg.js';
import type { Signals } from '../../../../gitops/watch/signals.js';

const REV = 'f'.repeat(40);
const spec: CanarySpec = {
  nodes: ['a', 'b'], bakeMs: 60_000, thresholds: { minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 },
  publishedAt: 1_000, previous: { revision: 'e'.repeat(40), signer: null },
};
const sig = (over: Partial<Signals> = {}): Signals => ({ at: 0, queries: 0, servfail: 0, enabled: 4, healthy: 4, ...over });
const rep = (node: string, appliedAt: number, current: Partial<Signals> = {}, o: { live?: boolean; revision?: string } = {}): NodeReport =>
  ({ node, live: o.live ?? true, report: { revision: o.revision ?? REV, appliedAt, baseline: sig(), current: sig(current) } });
const none = (node: string, live = true): NodeReport => ({ node, live, report: undefined });

const rows: { name: string; reports: NodeReport[]; now: number; want: { verdict: string; reason: RegExp | null; until: number | null; waitingFor: string[] } }[] = [
  { name: 'nobody reported yet', reports: [none('a'), none('b')], now: 500_000, want: { verdict: 'wait', reason: /^waiting for a, b to report the revision applied$/, until: null, waitingFor: ['a', 'b'] } },
  { name: 'one canary node never reports: the fan-out waits, however long', reports: [rep('a', 2_000), none('b', false)], now: 10_000_000, want: { verdict: 'wait', reason: /^waiting for b to report the revision applied \(not live\)$/, until: null, waitingFor: ['b'] } },
  { name: 'a report of another revision does not count', reports: [rep('a', 2_000), rep('b', 2_000, {}, { revision: 'x'.repeat(40) })], now: 500_000, want: { verdict: 'wait', reason: /waiting for b/, until: null, waitingFor: ['b'] } },
  { name: 'every node applied; the bake runs from the last apply', reports: [rep('a', 2_000), rep('b', 5_000)], now: 64_999, want: { verdict: 'wait', reason: /^every canary node applied it; no breach so far$/, until: 65_000, waitingFor: [] } },
  { name: 'the bake is over: promote', reports: [rep('a', 2_000), rep('b', 5_000)], now: 65_000, want: { verdict: 'promote', reason: null, until: 65_000, waitingFor: [] } },
  { name: 'a breach aborts at once, before every node reported', reports: [rep('a', 2_000, { healthy: 1 }), none('b')], now: 3_000, want: { verdict: 'abort', reason: /^node a: healthy members 1\/4 \(25%\) below minHealthyShare 50%$/, until: null, waitingFor: ['b'] } },
  { name: 'a SERVFAIL rate above the limit aborts, naming the node', reports: [rep('a', 2_000), rep('b', 2_000, { queries: 200, servfail: 20 })], now: 3_000, want: { verdict: 'abort', reason: /^node b: SERVFAIL rate 10% of 200 answers above maxServfailRate 5%$/, until: 62_000, waitingFor: [] } },
  { name: 'too few queries: the rate is not judged', reports: [rep('a', 2_000), rep('b', 2_000, { queries: 50, servfail: 50 })], now: 62_000, want: { verdict: 'promote', reason: null, until: 62_000, waitingFor: [] } },
  { name: 'a breach reported by a node that went away still aborts', reports: [rep('a', 2_000, { healthy: 0 }, { live: false }), rep('b', 2_000)], now: 100_000, want: { verdict: 'abort', reason: /^node a: /, until: 62_000, waitingFor: [] } },
  { name: 'a breach after the bake ended still wins over promote', reports: [rep('a', 2_000), rep('b', 2_000, { healthy: 0 })], now: 100_000, want: { verdict: 'abort', reason: /^node b: /, until: 62_000, waitingFor: [] } },
];

test('decideCanary: wait, promote or abort from the canary nodes\' reports and the time', () => {
  for (const r of rows) {
    const got = decideCanary(REV, spec, r.reports, r.now);
    assert.equal(got.verdict, r.want.verdict, r.name);
    if (r.want.reason) assert.match(got.reason ?? '', r.want.reason, r.name); else assert.equal(got.reason, null, r.name);
    assert.equal(got.until, r.want.until, r.name);
    assert.deepEqual(got.waitingFor, r.want.waitingFor, r.name);
    assert.deepEqual(got.nodes.map((n) => n.node), ['a', 'b'], `${r.name}: one verdict per canary node, in the spec's order`);
  }
});

test('decideCanary: per-node verdicts carry the signals, or nulls before a report', () => {
  const got = decideCanary(REV, spec, [rep('a', 2_000, { healthy: 3, queries: 400, servfail: 4 }), none('b', false)], 3_000);
  assert.deepEqual(got.nodes, [
    { node: 'a', live: true, applied: true, appliedAt: 2_000, healthyShare: 0.75, servfailRate: 0.01, queries: 400, breach: null },
    { node: 'b', live: false, applied: false, appliedAt: null, healthyShare: null, servfailRate: null, queries: null, breach: null },
  ]);
});
