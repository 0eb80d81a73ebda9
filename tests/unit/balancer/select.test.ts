import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectCandidates, type SelectSpec } from '../../../runtime/balancer/select.js';
import { orderByLatency, pickByRum } from '../../../runtime/balancer/chain-steps.js';
import type { StepTrace } from '../../../runtime/balancer/types.js';
import { cand, cands, ctx, ips } from './fixtures.js';

const spec = (over: Partial<SelectSpec> = {}): SelectSpec => ({ algorithm: 'round-robin', chain: [], whenAllUnhealthy: 'all', mapRules: [], asnRules: [], ...over });

test('all members unhealthy: all / nodata / servfail', () => {
  const enabled = cands('a', 'b');
  const rows = [
    { name: 'all (default) answers every enabled member', p: 'all' as const, outcome: 'answer', want: ['a', 'b'] },
    { name: 'nodata', p: 'nodata' as const, outcome: 'nodata', want: [] },
    { name: 'servfail', p: 'servfail' as const, outcome: 'servfail', want: [] },
  ];
  for (const r of rows) {
    const s = selectCandidates(spec({ whenAllUnhealthy: r.p }), enabled, [], ctx());
    assert.equal(s.outcome, r.outcome, r.name);
    assert.deepEqual(ips(s.list), r.want, r.name);
  }
  assert.equal(selectCandidates(spec(), [], [], ctx()).outcome, 'nodata', 'no enabled members');
});

test('unhealthy members are filtered before the algorithm', () => {
  const enabled = cands('a', 'b', 'c');
  const healthy = [enabled[0]!, enabled[2]!];
  for (let seq = 0; seq < 4; seq++) assert.ok(!ips(selectCandidates(spec(), enabled, healthy, ctx({ seq })).list).includes('b'));
  const f = selectCandidates(spec({ algorithm: 'failover' }), [cand('p1', { priority: 1 }), cand('p2', { priority: 2 })], [cand('p2', { priority: 2 })], ctx());
  assert.deepEqual(ips(f.list), ['p2'], 'failover skips the unhealthy primary');
});

test('score sort runs before round-robin', () => {
  const enabled = [cand('low', { score: 0.3, order: 0 }), cand('high', { score: 1, order: 1 })];
  for (let seq = 0; seq < 3; seq++) assert.equal(selectCandidates(spec(), enabled, enabled, ctx({ seq })).list[0]!.ip, 'high');
});

test('geo-ip: unknown client falls back to round-robin order; scope reported', () => {
  const enabled = [cand('far', { lat: 35, lon: 139, order: 0 }), cand('near', { lat: 48, lon: 2, order: 1 })];
  const known = selectCandidates(spec({ algorithm: 'geo-ip' }), enabled, enabled, ctx({ locate: () => ({ lat: 50, lon: 0 }) }));
  assert.deepEqual(ips(known.list), ['near', 'far']);
  assert.equal(known.clientScoped, true);
  assert.deepEqual(ips(selectCandidates(spec({ algorithm: 'geo-ip' }), enabled, enabled, ctx({ seq: 1 })).list), ['near', 'far']);
  assert.deepEqual(ips(selectCandidates(spec({ algorithm: 'geo-ip' }), enabled, enabled, ctx({ seq: 2 })).list), ['far', 'near']);
  assert.equal(selectCandidates(spec(), enabled, enabled, ctx()).clientScoped, false, 'round-robin is not client-specific');
});

test('asn: matched endpoint first, unmatched gets round-robin', () => {
  const enabled = cands('a', 'b', 'c');
  const s = spec({ algorithm: 'asn', asnRules: [{ asn: 64500, org: undefined, endpoint: 'c' }] });
  assert.deepEqual(ips(selectCandidates(s, enabled, enabled, ctx({ asnOf: () => ({ asn: 64500, org: '' }) })).list), ['c', 'a', 'b']);
  assert.deepEqual(ips(selectCandidates(s, enabled, enabled, ctx({ seq: 1, asnOf: () => ({ asn: 1, org: '' }) })).list), ['b', 'c', 'a']);
  assert.deepEqual(ips(selectCandidates(s, enabled, enabled, ctx({ seq: 2 })).list), ['c', 'a', 'b'], 'unknown client: rotation');
});

test('chain: geo-ip then rum; rum degrades RUM → probe RTT → order and is terminal', () => {
  const a = cand('a', { lat: 35, lon: 139, rttMs: 40, rumUrl: 'http://a/', order: 0 });
  const b = cand('b', { lat: 48, lon: 2, rttMs: 90, rumUrl: null, order: 1 });
  const trace: StepTrace[] = [];
  const s = selectCandidates(spec({ chain: ['geo-ip', 'rum'] }), [a, b], [a, b], ctx({ locate: () => ({ lat: 50, lon: 0 }), trace }));
  assert.deepEqual(ips(s.list), ['a'], 'rum fell back to the lowest probe RTT');
  assert.deepEqual(trace.map((t) => t.step), ['health', 'score', 'round-robin', 'geo-ip', 'rum']);
  assert.deepEqual(trace[3]!.output, ['b', 'a'], 'geo-ip step ordered by distance');
  assert.match(trace[4]!.reason, /RumFallbackProbeRtt/);
  const rum = { lowest: () => ({ ip: 'a', latencyMs: 12 }) };
  assert.match(pickByRum([b, a], '1.2.3.4', rum).reason, /RumData 12ms/);
  assert.deepEqual(ips(pickByRum([b, a], '1.2.3.4', { lowest: () => ({ ip: 'b', latencyMs: 1 }) }).out), ['a'], 'a member without rumUrl never wins rum');
  const noRtt = [cand('x'), cand('y')];
  assert.deepEqual(ips(pickByRum(noRtt, '1.2.3.4', { lowest: () => undefined }).out), ['x'], 'no data: first in order');
  assert.equal(pickByRum([], '1.2.3.4', { lowest: () => undefined }).out.length, 0);
});

test('latency step orders by RTT, unmeasured keep order at the end', () => {
  const l = orderByLatency([cand('u1'), cand('slow', { rttMs: 50 }), cand('u2'), cand('fast', { rttMs: 5 })]);
  assert.deepEqual(ips(l.out), ['fast', 'slow', 'u1', 'u2']);
  assert.equal(orderByLatency([cand('u')]).reason, 'NoRttData');
});

test('the rum fallback orders by the cluster-wide RTT; the latency step by this node\'s own', () => {
  // this node measured x faster; the cluster's fastest measurement is of y
  const x = cand('x', { rttMs: 10, clusterRttMs: 10, rumUrl: 'http://x/' });
  const y = cand('y', { rttMs: 40, clusterRttMs: 4, rumUrl: 'http://y/', order: 1 });
  const none = { lowest: () => undefined };
  const picked = pickByRum([x, y], '198.51.100.7', none);
  assert.deepEqual(ips(picked.out), ['y']);
  assert.equal(picked.reason, 'RumFallbackProbeRtt 4ms');
  assert.deepEqual(ips(orderByLatency([x, y]).out), ['x', 'y'], 'latency: node-to-member');
  const peerOnly = cand('p', { rttMs: -1, clusterRttMs: 7 });
  assert.deepEqual(ips(pickByRum([cand('u'), peerOnly], '198.51.100.7', none).out), ['p'], 'a peer\'s RTT counts where this node has none');
  assert.deepEqual(ips(pickByRum([cand('u', { rttMs: 3 }), cand('v', { rttMs: 9 })], '198.51.100.7', none).out), ['u'], 'no cluster RTT: this node\'s');
});
