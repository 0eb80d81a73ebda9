import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Candidate } from '../../../runtime/balancer/types.js';
import { subnetCidr, subnetKey } from '../../../runtime/rum/subnet.js';
import { RumStore } from '../../../runtime/rum/store.js';
import { TokenBuckets } from '../../../runtime/rum/rate-limit.js';

const cand = (ip: string): Candidate => ({ ip, family: ip.includes(':') ? 6 : 4, order: 0, weight: 1, priority: 0, rumUrl: `http://${ip}/`, score: 1, rttMs: -1, lat: NaN, lon: NaN, rdata: Buffer.alloc(4) });

test('subnetKey: /24 for IPv4, /48 for IPv6 whatever the text form; not an address is undefined', () => {
  const rows: [string, string | undefined][] = [
    ['203.0.113.7', '203.0.113'], ['203.0.113.250', '203.0.113'], ['::ffff:198.51.100.9', '198.51.100'],
    ['2001:db8:1:2::1', '2001:db8:1'], ['2001:0DB8:0001:ffff:0:0:0:1', '2001:db8:1'], ['2001:db8::1', '2001:db8:0'],
    ['2001:db8:0:0:0:0:0:1', '2001:db8:0'], ['::1', '0:0:0'], ['fe80::1%eth0', 'fe80:0:0'], ['2001:db8:aa::', '2001:db8:aa'],
    ['nonsense', undefined], ['1', undefined], ['2001:db8:zz::1', undefined], ['', undefined],
  ];
  for (const [ip, want] of rows) assert.equal(subnetKey(ip), want, ip);
  assert.equal(subnetCidr('203.0.113'), '203.0.113.0/24');
  assert.equal(subnetCidr('2001:db8:1'), '2001:db8:1::/48');
});

test('store: the lowest fresh latency of the client subnet among the candidates; samples smoothed; other subnets apart', () => {
  let now = 1_000_000;
  const s = new RumStore({ maxSubnets: 100, ttlMs: 30 * 60_000, maxMembersPerSubnet: 8 }, () => now);
  s.add('203.0.113', '10.0.0.1', 80);
  s.add('203.0.113', '10.0.0.2', 20);
  s.add('198.51.100', '10.0.0.1', 5);
  const c = [cand('10.0.0.1'), cand('10.0.0.2'), cand('10.0.0.3')];
  assert.deepEqual(s.lowest('203.0.113.77', c), { ip: '10.0.0.2', latencyMs: 20 });
  assert.deepEqual(s.lowest('198.51.100.1', c), { ip: '10.0.0.1', latencyMs: 5 });
  assert.equal(s.lowest('192.0.2.1', c), undefined, 'no coverage for this subnet');
  assert.equal(s.lowest('203.0.113.77', [cand('10.0.0.3')]), undefined, 'no coverage of these candidates');
  // a slower sample moves the average by 0.3 of the difference: 20 + 0.3 * (120 - 20) = 50, still < 80
  s.add('203.0.113', '10.0.0.2', 120);
  assert.deepEqual(s.lowest('203.0.113.1', c), { ip: '10.0.0.2', latencyMs: 50 });
  s.add('203.0.113', '10.0.0.2', 200); // 50 + 45 = 95 > 80
  assert.deepEqual(s.lowest('203.0.113.1', c), { ip: '10.0.0.1', latencyMs: 80 });
  // 30 minutes without a newer sample: stale, ignored, and swept
  now += 30 * 60_000 - 1;
  s.add('198.51.100', '10.0.0.3', 7);
  now += 2;
  assert.equal(s.lowest('203.0.113.1', c), undefined);
  assert.deepEqual(s.lowest('198.51.100.1', c), { ip: '10.0.0.3', latencyMs: 7 }, 'the newer sample is still fresh, the old one not');
  assert.equal(s.sweep(), 1);
  assert.equal(s.counts().subnets, 1);
});

test('store: bounded: at maxSubnets the least recently updated subnet goes; per subnet at most maxMembersPerSubnet members', () => {
  let now = 0;
  const s = new RumStore({ maxSubnets: 3, ttlMs: 60_000, maxMembersPerSubnet: 2 }, () => ++now);
  s.add('10.0.1', '1.1.1.1', 10);
  s.add('10.0.2', '1.1.1.1', 10);
  s.add('10.0.3', '1.1.1.1', 10);
  s.add('10.0.1', '1.1.1.1', 10); // 10.0.1 is now the newest
  s.add('10.0.4', '1.1.1.1', 10); // evicts 10.0.2
  assert.deepEqual(s.counts(), { subnets: 3, samples: 5, evicted: 1 });
  assert.equal(s.lowest('10.0.2.9', [cand('1.1.1.1')]), undefined);
  assert.ok(s.lowest('10.0.1.9', [cand('1.1.1.1')]));
  s.add('10.0.4', '2.2.2.2', 5);
  s.add('10.0.4', '3.3.3.3', 1); // the member measured longest ago (1.1.1.1) makes room
  assert.equal(s.lowest('10.0.4.1', [cand('1.1.1.1')]), undefined);
  assert.deepEqual(s.lowest('10.0.4.1', [cand('2.2.2.2'), cand('3.3.3.3')]), { ip: '3.3.3.3', latencyMs: 1 });
  // memory stays bounded under churn: 10,000 distinct subnets never hold more than 3
  for (let i = 0; i < 10_000; i++) s.add(`10.${i >> 8}.${i & 255}`, '1.1.1.1', 10);
  assert.equal(s.counts().subnets, 3);
});

test('store: coverage counts only the addresses asked for', () => {
  const s = new RumStore(undefined, () => 5);
  s.add('10.0.1', '1.1.1.1', 10); s.add('10.0.1', '1.1.1.1', 12); s.add('10.0.2', '1.1.1.1', 10); s.add('10.0.2', '2.2.2.2', 10);
  const cov = s.coverage((ip) => ip === '1.1.1.1');
  assert.equal(cov.subnets, 2);
  assert.equal(cov.samples, 3);
  assert.deepEqual([...cov.members], [['1.1.1.1', { subnets: 2, samples: 3 }]]);
  assert.equal(s.coverage(() => false).subnets, 0);
});

test('token buckets: 2 a second with a burst of 10 per source; Retry-After in whole seconds', () => {
  let now = 0;
  const b = new TokenBuckets({ perSecond: 2, burst: 10, maxSources: 100 }, () => now);
  for (let i = 0; i < 10; i++) assert.equal(b.take('a').ok, true, `burst ${i}`);
  assert.deepEqual(b.take('a'), { ok: false, retryAfterS: 1, full: false });
  assert.equal(b.take('b').ok, true, 'other sources have their own bucket');
  now += 500; // one token back
  assert.equal(b.take('a').ok, true);
  assert.equal(b.take('a').ok, false);
  now += 5_000; // ten back, capped at the burst
  for (let i = 0; i < 10; i++) assert.equal(b.take('a').ok, true);
  assert.equal(b.take('a').ok, false);
});

test('token buckets at the source cap: only a fully refilled idle bucket makes room, else the newcomer is refused', () => {
  let now = 0;
  const b = new TokenBuckets({ perSecond: 2, burst: 10, maxSources: 2 }, () => now);
  b.take('a'); b.take('b');
  const refused = b.take('c');
  assert.equal(refused.ok, false);
  assert.deepEqual(refused, { ok: false, retryAfterS: 1, full: true }, 'a is 1 token short: back in 0.5 s');
  assert.equal(b.size, 2);
  now += 400;
  assert.equal(b.take('c').ok, false, 'a is still not full');
  now += 100; // a is full again: it is forgotten and c gets a fresh bucket
  assert.equal(b.take('c').ok, true);
  assert.equal(b.size, 2);
  // a was forgotten; its next request needs a full bucket to take the place of: the least recently used one (c) is not
  for (let i = 0; i < 9; i++) b.take('b');
  now += 100;
  assert.equal(b.take('a').ok, false, 'c took a token 100 ms ago: nobody is evicted');
});
