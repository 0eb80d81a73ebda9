import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import type { MemberRow, PoolRow, Row } from '../../../core/model/types.js';
import { desiredPrefixes, evaluatePools, type PoolPrefixes } from '../../../runtime/bgp/announce.js';

const meta = { origin: 'api' as const, revision: 'r1', tenantId: 'default' };
const pool = (id: string, name: string): PoolRow => ({ ...meta, id, kind: 'pool', name });
const member = (id: string, poolId: string, ip: string, enabled = true): MemberRow =>
  ({ ...meta, id, kind: 'member', poolId, ipAddress: ip, port: 80, weight: 1, priority: 0, enabled, rumUrl: null });
const snap = (rows: Row[]) => nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row })), 'r1', 0);

const S = snap([
  pool('p1', 'web'), member('m1', 'p1', '10.0.0.1'), member('m2', 'p1', '10.0.0.2'), member('m3', 'p1', '10.0.0.3'), member('m4', 'p1', '10.0.0.4', false),
  pool('p2', 'empty'), member('m5', 'p2', '10.0.1.1', false),
  pool('p3', 'dup'), pool('p4', 'dup'),
]);
const entry = (poolID: string, withdrawThreshold = 0): PoolPrefixes => ({ poolID, prefixes: ['198.51.100.0/24'], withdrawThreshold });

// Each row: which members are down, the entry, and the verdict (docs/bgp.md "Pool prefixes").
const ROWS: { name: string; down: string[]; entry: PoolPrefixes; want: [boolean, string, number, number] }[] = [
  { name: 'all healthy', down: [], entry: entry('p1'), want: [true, 'Healthy', 3, 3] },
  { name: 'by name', down: [], entry: entry('web'), want: [true, 'Healthy', 3, 3] },
  { name: 'one healthy keeps threshold 0', down: ['10.0.0.1', '10.0.0.2'], entry: entry('p1'), want: [true, 'Healthy', 1, 3] },
  { name: 'none healthy', down: ['10.0.0.1', '10.0.0.2', '10.0.0.3'], entry: entry('p1'), want: [false, 'NoHealthyMember', 0, 3] },
  { name: 'disabled members do not count', down: ['10.0.0.4'], entry: entry('p1', 1), want: [true, 'Healthy', 3, 3] },
  { name: 'threshold 0.5 with two of three healthy keeps', down: ['10.0.0.1'], entry: entry('p1', 0.5), want: [true, 'Healthy', 2, 3] },
  { name: 'threshold 0.5 below half withdraws', down: ['10.0.0.1', '10.0.0.2'], entry: entry('p1', 0.5), want: [false, 'BelowThreshold', 1, 3] },
  { name: 'threshold 1 needs every enabled member', down: ['10.0.0.3'], entry: entry('p1', 1), want: [false, 'BelowThreshold', 2, 3] },
  { name: 'no enabled member', down: [], entry: entry('p2'), want: [false, 'NoEnabledMember', 0, 0] },
  { name: 'unknown pool', down: [], entry: entry('nope'), want: [false, 'PoolNotFound', 0, 0] },
  { name: 'name of two pools', down: [], entry: entry('dup'), want: [false, 'PoolNameAmbiguous', 0, 0] },
];

for (const r of ROWS) {
  test(`pool verdict: ${r.name}`, () => {
    const [v] = evaluatePools([r.entry], S, (_p, ip) => !r.down.includes(ip));
    assert.deepEqual([v!.announce, v!.reason, v!.healthyMembers, v!.enabledMembers], r.want);
  });
}

test('exactly half healthy keeps threshold 0.5 ("withdraws below 50 %")', () => {
  const s = snap([pool('p', 'two'), member('a', 'p', '10.0.2.1'), member('b', 'p', '10.0.2.2')]);
  const [v] = evaluatePools([entry('p', 0.5)], s, (_p, ip) => ip === '10.0.2.1');
  assert.deepEqual([v!.announce, v!.reason], [true, 'Healthy']);
});

test('desired prefixes: node prefixes plus announced pools, each once, sorted', () => {
  const verdicts = evaluatePools(
    [{ poolID: 'p1', prefixes: ['198.51.100.0/24', '203.0.113.0/24'], withdrawThreshold: 0 }, { poolID: 'nope', prefixes: ['192.0.2.0/25'], withdrawThreshold: 0 }],
    S, () => true,
  );
  assert.deepEqual(desiredPrefixes(['203.0.113.0/24', '10.0.0.0/8'], verdicts), ['10.0.0.0/8', '198.51.100.0/24', '203.0.113.0/24']);
});
