import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeHealthPolicy, makeRttPolicy } from '../../../runtime/cluster/install-policy.js';
import { Liveness } from '../../../runtime/cluster/liveness.js';
import { PeerHealth } from '../../../runtime/cluster/peer-health.js';

test('peer reports count only while the peer is live; a newer entry is never undone by an older one', () => {
  let now = 1_000;
  const live = new Liveness('self', 3_000, () => now);
  const peers = new PeerHealth();
  const any = makeHealthPolicy('global-any-healthy', peers, live, 51);
  peers.set('p', '10.0.0.1', { healthy: true, score: 1, lastChecked: 10, rttMs: 1, node: 'b', receivedAt: now });
  assert.equal(any('p', '10.0.0.1', { healthy: false, score: 0, lastChecked: 1, rttMs: 0, node: 'self' }), false, 'b not heard yet: not live');
  live.heard('b');
  assert.equal(any('p', '10.0.0.1', { healthy: false, score: 0, lastChecked: 1, rttMs: 0, node: 'self' }), true);
  // an older update (catch-up racing a flip) is ignored
  assert.equal(peers.set('p', '10.0.0.1', { healthy: false, score: 0, lastChecked: 5, rttMs: 1, node: 'b', receivedAt: now }), false);
  now += 3_000;
  live.sweep();
  assert.equal(live.isLive('b'), false, 'gone after heartbeatTTL');
  assert.equal(any('p', '10.0.0.1', { healthy: false, score: 0, lastChecked: 1, rttMs: 0, node: 'self' }), false);
  assert.equal(any('p', '10.0.0.1', undefined), true, 'all peers gone, no local: optimistic');
  live.heard('b');
  live.left('b');
  assert.equal(live.isLive('b'), false, 'bye drops at once');
});

test('liveness ignores this node and reports changes', () => {
  const live = new Liveness('self', 1_000, () => 0);
  const seen: number[] = [];
  live.onChange = (s) => seen.push(s.size);
  live.heard('self');
  live.heard('a');
  live.heard('a');
  live.heard('b');
  assert.deepEqual(seen, [1, 2]);
});

test('the probe RTT the DNS steps use: the lowest of this node\'s and the live peers\', measured ones only', () => {
  let now = 1_000;
  const live = new Liveness('self', 3_000, () => now);
  const peers = new PeerHealth();
  const rtt = makeRttPolicy(peers, live);
  const local = (rttMs: number, lastChecked = 1) => ({ healthy: true, score: 1, lastChecked, rttMs, node: 'self' });
  assert.equal(rtt('p', '10.0.0.1', undefined), -1, 'nobody measured it');
  assert.equal(rtt('p', '10.0.0.1', local(40)), 40, 'no peer: the local RTT');
  assert.equal(rtt('p', '10.0.0.1', local(40, 0)), -1, 'never probed here: none');
  peers.set('p', '10.0.0.1', { healthy: true, score: 1, lastChecked: 10, rttMs: 12, node: 'b', receivedAt: now });
  peers.set('p', '10.0.0.1', { healthy: false, score: 0, lastChecked: 10, rttMs: 0, node: 'c', receivedAt: now });
  assert.equal(rtt('p', '10.0.0.1', local(40)), 40, 'b is not live yet');
  live.heard('b');
  live.heard('c');
  assert.equal(rtt('p', '10.0.0.1', local(40)), 12, 'the cluster-wide minimum; c\'s 0 (never measured) is no RTT');
  assert.equal(rtt('p', '10.0.0.1', local(5)), 5);
  assert.equal(rtt('p', '10.0.0.1', local(0)), 12, 'a local 0 (no successful probe yet) gives way to a measured one');
  assert.equal(rtt('p', '10.0.0.1', undefined), 12, 'a peer\'s RTT counts before this node probed');
  now += 3_000;
  live.sweep();
  assert.equal(rtt('p', '10.0.0.1', local(40)), 40, 'b gone: its report stops counting');
});
