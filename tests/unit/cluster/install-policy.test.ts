import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeHealthPolicy } from '../../../runtime/cluster/install-policy.js';
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
