import { test } from 'node:test';
import assert from 'node:assert/strict';
import { roundRobin } from '../../../runtime/balancer/round-robin.js';
import { weightedRoundRobin } from '../../../runtime/balancer/weighted.js';
import { failover } from '../../../runtime/balancer/failover.js';
import { greatCircleKm, orderByDistance } from '../../../runtime/balancer/geo-ip.js';
import { mapFile, prepareMapRules } from '../../../runtime/balancer/map-file.js';
import { endpointFirst, matchAsnRule, prepareAsnRules } from '../../../runtime/balancer/asn.js';
import { sortByScore } from '../../../runtime/balancer/score-sort.js';
import { cand, cands, ips, seqRng } from './fixtures.js';

test('round-robin rotates by sequence number within score tiers', () => {
  const rows: { name: string; given: ReturnType<typeof cands>; seq: number; want: string[] }[] = [
    { name: 'seq 0 keeps order', given: cands('a', 'b', 'c'), seq: 0, want: ['a', 'b', 'c'] },
    { name: 'seq 1 rotates once', given: cands('a', 'b', 'c'), seq: 1, want: ['b', 'c', 'a'] },
    { name: 'seq 5 wraps', given: cands('a', 'b', 'c'), seq: 5, want: ['c', 'a', 'b'] },
    { name: 'single member', given: cands('a'), seq: 7, want: ['a'] },
    { name: 'empty', given: [], seq: 3, want: [] },
    { name: 'lower tier stays behind', given: [cand('a', { score: 1 }), cand('b', { score: 1 }), cand('c', { score: 0.5 })], seq: 1, want: ['b', 'a', 'c'] },
  ];
  for (const r of rows) assert.deepEqual(ips(roundRobin(r.given, r.seq)), r.want, r.name);
  const firsts = new Set([0, 1, 2, 3].map((s) => roundRobin(cands('a', 'b', 'c', 'd'), s)[0]!.ip));
  assert.equal(firsts.size, 4, 'four consecutive queries start with four different members');
});

test('weighted-round-robin draws by weight and leaves weight 0 out', () => {
  const given = [cand('a', { weight: 3 }), cand('b', { weight: 1 }), cand('z', { weight: 0 })];
  const rows: { name: string; rand: number[]; want: string[] }[] = [
    { name: 'low draw picks the heavy member', rand: [0.1, 0.1], want: ['a', 'b'] },
    { name: 'draw past 3/4 picks the light member', rand: [0.8, 0.1], want: ['b', 'a'] },
  ];
  for (const r of rows) assert.deepEqual(ips(weightedRoundRobin(given, seqRng(r.rand))), r.want, r.name);
  let rnd = 12345;
  const rng = () => ((rnd = (rnd * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const counts: Record<string, number> = { a: 0, b: 0, z: 0 };
  for (let i = 0; i < 4000; i++) counts[weightedRoundRobin(given, rng)[0]!.ip]!++;
  assert.equal(counts.z, 0);
  assert.ok(counts.a! / 4000 > 0.7 && counts.a! / 4000 < 0.8, `share of a ${counts.a! / 4000}`);
  assert.deepEqual(weightedRoundRobin([cand('z', { weight: 0 })], Math.random), []);
});

test('failover picks exactly one by priority, 0 last, score then storage order', () => {
  const rows: { name: string; given: ReturnType<typeof cands>; want: string[] }[] = [
    { name: 'lowest priority wins', given: [cand('a', { priority: 2, order: 0 }), cand('b', { priority: 1, order: 1 })], want: ['b'] },
    { name: 'priority 0 sorts last', given: [cand('a', { priority: 0, order: 0 }), cand('b', { priority: 5, order: 1 })], want: ['b'] },
    { name: 'all unset: storage order', given: [cand('a', { order: 0 }), cand('b', { order: 1 })], want: ['a'] },
    { name: 'tie broken by higher score', given: [cand('a', { priority: 1, score: 0.5, order: 0 }), cand('b', { priority: 1, score: 0.9, order: 1 })], want: ['b'] },
    { name: 'tie and equal score: storage order', given: [cand('b', { priority: 1, order: 1 }), cand('a', { priority: 1, order: 0 })], want: ['a'] },
    { name: 'empty', given: [], want: [] },
  ];
  for (const r of rows) assert.deepEqual(ips(failover(r.given)), r.want, r.name);
});

test('geo-ip orders by great-circle distance, unknown locations last', () => {
  assert.ok(Math.abs(greatCircleKm(51.5074, -0.1278, 40.7128, -74.006) - 5570) < 15, 'London–New York ≈ 5570 km');
  assert.equal(greatCircleKm(10, 10, 10, 10), 0);
  const london = cand('lon', { lat: 51.5, lon: -0.12, order: 0 });
  const ny = cand('ny', { lat: 40.7, lon: -74, order: 1 });
  const tokyo = cand('tyo', { lat: 35.7, lon: 139.7, order: 2 });
  const nowhere = cand('unk', { order: 3 });
  const rows = [
    { name: 'client in Paris', client: { lat: 48.85, lon: 2.35 }, want: ['lon', 'ny', 'tyo', 'unk'] },
    { name: 'client in Boston', client: { lat: 42.36, lon: -71.06 }, want: ['ny', 'lon', 'tyo', 'unk'] },
    { name: 'client in Seoul', client: { lat: 37.57, lon: 126.98 }, want: ['tyo', 'lon', 'ny', 'unk'] },
  ];
  for (const r of rows) {
    const out = ips(orderByDistance([nowhere, tokyo, ny, london], r.client));
    assert.equal(out[0], r.want[0], r.name);
    assert.equal(out[3], 'unk', `${r.name}: unknown last`);
  }
  const twins = [cand('x', { lat: 1, lon: 1, score: 0.5, order: 0 }), cand('y', { lat: 1, lon: 1, score: 1, order: 1 })];
  assert.deepEqual(ips(orderByDistance(twins, { lat: 0, lon: 0 })), ['y', 'x'], 'equal distance: score breaks the tie');
});

test('map-file: most specific prefix first, ties in file order, unhealthy match falls back', () => {
  const rules = prepareMapRules([
    { cidr: '10.0.0.0/8', endpoint: '192.0.2.1' },
    { cidr: '10.1.0.0/16', endpoint: '192.0.2.2' },
    { cidr: '10.1.0.0/16', endpoint: '192.0.2.3' },
    { cidr: 'bad', endpoint: '192.0.2.9' },
    { cidr: '2001:db8::/32', endpoint: '192.0.2.3' },
  ]);
  assert.equal(rules.length, 4, 'invalid CIDR skipped');
  const all = cands('192.0.2.1', '192.0.2.2', '192.0.2.3');
  const rows = [
    { name: 'broad match', client: '10.9.9.9', given: all, want: ['192.0.2.1', '192.0.2.2', '192.0.2.3'] },
    { name: 'longest prefix wins over earlier broad rule', client: '10.1.2.3', given: all, want: ['192.0.2.2', '192.0.2.1', '192.0.2.3'] },
    { name: 'IPv6 client', client: '2001:db8::5', given: all, want: ['192.0.2.3', '192.0.2.1', '192.0.2.2'] },
    { name: 'no match: registered order', client: '172.16.0.1', given: all, want: ['192.0.2.1', '192.0.2.2', '192.0.2.3'] },
    { name: 'matched endpoint unhealthy: all healthy in order', client: '10.1.2.3', given: cands('192.0.2.1', '192.0.2.3'), want: ['192.0.2.1', '192.0.2.3'] },
    { name: 'bad client address', client: 'nonsense', given: all, want: ['192.0.2.1', '192.0.2.2', '192.0.2.3'] },
  ];
  for (const r of rows) assert.deepEqual(ips(mapFile(r.given, rules, r.client).out), r.want, r.name);
});

test('asn rules: asn exact, then org substring case-insensitive, first match wins', () => {
  const rules = prepareAsnRules([
    { asn: 64500, endpoint: 'e1' },
    { org: 'Telstra', endpoint: 'e2' },
    { asn: 64501, org: 'example', endpoint: 'e3' },
    { endpoint: 'ignored' },
  ]);
  assert.equal(rules.length, 3, 'a rule with neither asn nor org is dropped');
  const rows = [
    { name: 'asn exact', info: { asn: 64500, org: 'Whatever' }, want: 'e1' },
    { name: 'org substring any case', info: { asn: 1221, org: 'TELSTRA Pty Ltd' }, want: 'e2' },
    { name: 'asn of a later rule', info: { asn: 64501, org: 'x' }, want: 'e3' },
    { name: 'org of a rule with both', info: { asn: 9, org: 'An Example Net' }, want: 'e3' },
    { name: 'first match wins', info: { asn: 64500, org: 'telstra' }, want: 'e1' },
    { name: 'no match', info: { asn: 7, org: 'other' }, want: undefined },
  ];
  for (const r of rows) assert.equal(matchAsnRule(rules, r.info)?.rule.endpoint, r.want, r.name);
  assert.deepEqual(ips(endpointFirst(cands('a', 'b', 'c'), 'c')!), ['c', 'a', 'b']);
  assert.equal(endpointFirst(cands('a'), 'zz'), undefined);
});

test('score sort is stable and returns the input when already ordered', () => {
  const given = cands('a', 'b');
  assert.equal(sortByScore(given), given);
  const mixed = [cand('a', { score: 0.2 }), cand('b', { score: 1 }), cand('c', { score: 0.2 })];
  assert.deepEqual(ips(sortByScore(mixed)), ['b', 'a', 'c']);
  assert.deepEqual(ips(mixed), ['a', 'b', 'c'], 'input not reordered in place');
});
