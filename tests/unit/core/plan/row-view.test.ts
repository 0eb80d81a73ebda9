import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RowView } from '../../../../core/plan/row-view.js';
import { cascadeDeletes, nullifyReferences } from '../../../../core/plan/changes.js';
import { rebasePlan } from '../../../../core/plan/rebase.js';
import { emptySnapshot, nextSnapshot } from '../../../../core/snapshot/snapshot.js';
import type { MemberRow, PoolRow, Row, ServiceRow } from '../../../../core/model/types.js';
import type { Plan } from '../../../../core/plan/types.js';

const pool = (id: string): PoolRow => ({ kind: 'pool', id, name: id, origin: 'api', revision: '', tenantId: 'default' });
const member = (id: string, poolId: string): MemberRow => ({
  kind: 'member', id, poolId, ipAddress: '10.0.0.1', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, origin: 'api', revision: '', tenantId: 'default',
});
const service = (id: string, poolId: string | null): ServiceRow => ({ kind: 'service', id, name: id, domain: `${id}.example.test.`, poolId, origin: 'api', revision: '', tenantId: 'default' } as unknown as ServiceRow);
const snap = (rows: Row[]) => nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row })), 'r0', 0);
const ids = (rows: Iterable<Row>) => [...rows].map((r) => r.id);

test('a view reads the snapshot with the changes laid over it', () => {
  const cases: { name: string; over: (v: RowView) => void; want: { members: string[]; children: string[]; services: string[] } }[] = [
    { name: 'bare snapshot', over: () => {}, want: { members: ['m1', 'm2'], children: ['m1', 'm2'], services: ['s1'] } },
    { name: 'a created child', over: (v) => v.put(member('m3', 'p1')), want: { members: ['m1', 'm2', 'm3'], children: ['m1', 'm2', 'm3'], services: ['s1'] } },
    { name: 'a deleted child', over: (v) => v.remove('member', 'm1'), want: { members: ['m2'], children: ['m2'], services: ['s1'] } },
    { name: 'a child moved to another pool', over: (v) => v.put(member('m2', 'p2')), want: { members: ['m1', 'm2'], children: ['m1'], services: ['s1'] } },
    { name: 'a created service', over: (v) => v.put(service('s2', 'p1')), want: { members: ['m1', 'm2'], children: ['m1', 'm2'], services: ['s1', 's2'] } },
  ];
  for (const c of cases) {
    const v = new RowView(snap([pool('p1'), pool('p2'), member('m1', 'p1'), member('m2', 'p1'), service('s1', 'p1')]));
    c.over(v);
    assert.deepEqual({ members: ids(v.rowsOf('member')), children: ids(v.childrenOf('p1')), services: ids(v.rowsOf('service')) }, c.want, c.name);
  }
});

test('cascade and detach see the rows a plan created', () => {
  const v = new RowView(snap([pool('p1')]));
  v.put(member('m9', 'p1'));
  v.put(service('s9', 'p1'));
  const deletes = cascadeDeletes(v, pool('p1'));
  assert.deepEqual(deletes.map((c) => `${c.op} ${c.id}`), ['delete p1', 'delete m9']);
  const detached = nullifyReferences(v, new Set(['p1', 'm9']), 'r1', deletes);
  assert.deepEqual(detached.map((c) => [c.op, c.id, c.fields]), [['update', 's9', [{ field: 'poolId', before: 'p1', after: null }]]]);
});

test('a stream plan that creates a member and then deletes its pool leaves neither', () => {
  const s = snap([pool('p1')]);
  const m = member('m1', 'p1');
  const plan: Plan = {
    revision: 'r1', origin: 'api', baseVersion: 0, counts: { create: 1, update: 0, delete: 1 },
    safety: { safe: true, existing: 0, updates: 0, deletes: 1, maxChangePercent: 100, minExisting: 0 },
    changes: [
      { op: 'create', kind: 'member', id: 'm1', label: 'member', after: m, fields: [] },
      { op: 'delete', kind: 'pool', id: 'p1', label: 'pool', before: pool('p1'), fields: [] },
    ],
  };
  const r = rebasePlan(plan, s);
  assert.deepEqual(r.changes.map((c) => `${c.op} ${c.id}`), ['create m1', 'delete p1', 'delete m1']);
  assert.deepEqual(r.counts, { create: 1, update: 0, delete: 2 });
});
