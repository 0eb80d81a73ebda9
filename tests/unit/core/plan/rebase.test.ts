import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rebasePlan } from '../../../../core/plan/rebase.js';
import { planCreate, planDelete, planUpdate } from '../../../../core/plan/delta.js';
import { emptySnapshot, getRow, nextSnapshot, type Snapshot } from '../../../../core/snapshot/snapshot.js';
import { planMutations } from '../../../../core/apply/apply.js';
import type { Plan } from '../../../../core/plan/types.js';
import type { MemberRow, PoolRow, Row, ServiceRow } from '../../../../core/model/types.js';

const pool = (id: string, name = id): PoolRow => ({ kind: 'pool', id, name, origin: 'api', revision: '', tenantId: 'default' });
const member = (id: string, poolId: string, ip: string): MemberRow => ({
  kind: 'member', id, poolId, ipAddress: ip, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, origin: 'api', revision: '', tenantId: 'default',
});
const apply = (s: Snapshot, p: Plan): Snapshot => nextSnapshot(s, planMutations(p), p.revision, 0);
/** applies a plan as a stream message: rebased on the local rows */
const applyStream = (s: Snapshot, p: Plan): Snapshot => apply(s, rebasePlan(p, s));
const rows = (s: Snapshot) => JSON.stringify([...s.rows].filter(([, m]) => m.size > 0).map(([k, m]) => [k, [...m.values()].sort((a: Row, b: Row) => a.id.localeCompare(b.id))]).sort());

test('an echo of a plan already applied here is a no-op', () => {
  const s0 = emptySnapshot();
  const p = planCreate(s0, pool('p1'), 'r1');
  const s1 = apply(s0, p);
  const r = rebasePlan(p, s1);
  assert.equal(r.changes.length, 0);
  assert.equal(r.baseVersion, s1.version);
});

test('two nodes that applied concurrent plans locally converge to stream order', () => {
  const base = applyStream(applyStream(emptySnapshot(), planCreate(emptySnapshot(), pool('p1', 'old'), 'r0')), planCreate(emptySnapshot(), member('m1', 'p1', '10.0.0.1'), 'r0b'));
  const cur = getRow<PoolRow>(base, 'pool', 'p1')!;
  // node A renames the pool; node B updates the member's weight and also renames the pool
  const pA = planUpdate(base, cur, { ...cur, name: 'from-a' }, 'rA');
  const m = getRow<MemberRow>(base, 'member', 'm1')!;
  const pB = planUpdate(base, m, { ...m, weight: 5 }, 'rB');
  const pB2 = planUpdate(base, cur, { ...cur, name: 'from-b' }, 'rB2');
  // stream order: rA, rB, rB2
  const nodeA = [pA, pB, pB2].reduce(applyStream, apply(base, pA));
  const nodeB = [pA, pB, pB2].reduce(applyStream, apply(apply(base, pB), pB2));
  const nodeC = [pA, pB, pB2].reduce(applyStream, base);
  assert.equal(rows(nodeA), rows(nodeC));
  assert.equal(rows(nodeB), rows(nodeC));
  assert.equal(getRow<PoolRow>(nodeC, 'pool', 'p1')!.name, 'from-b');
  assert.equal(getRow<MemberRow>(nodeC, 'member', 'm1')!.weight, 5);
});

test('a delete removes local children made after the plan and nulls references; later writes to gone rows are dropped', () => {
  let s = applyStream(emptySnapshot(), planCreate(emptySnapshot(), pool('p1'), 'r0'));
  const svc: ServiceRow = { kind: 'service', id: 's1', name: 'web', domain: 'www.example.test.', poolId: 'p1', origin: 'api', revision: '', tenantId: 'default' } as unknown as ServiceRow;
  s = applyStream(s, planCreate(s, svc, 'r0s'));
  const del = planDelete(s, getRow(s, 'pool', 'p1')!, 'rDel');
  // on node B a member was created in p1 before the delete arrived (stream: rDel then rM)
  const mk = planCreate(s, member('m9', 'p1', '10.0.0.9'), 'rM');
  const nodeB = [del, mk].reduce(applyStream, apply(s, mk));
  const nodeC = [del, mk].reduce(applyStream, s);
  assert.equal(getRow(nodeC, 'member', 'm9'), undefined, 'create under a deleted parent is dropped');
  assert.equal(getRow(nodeB, 'member', 'm9'), undefined, 'local child removed with its parent');
  assert.equal(rows(nodeB), rows(nodeC));
  // an update of a row deleted earlier in stream order stays deleted
  const upd = planUpdate(s, getRow(s, 'pool', 'p1')!, { ...getRow<PoolRow>(s, 'pool', 'p1')!, name: 'late' }, 'rU');
  assert.equal(rebasePlan(upd, nodeC).changes.length, 0);
  assert.equal((getRow(nodeC, 'service', 's1') as unknown as { poolId: string | null }).poolId, null);
});
