import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planChanges } from '../../../../core/plan/plan.js';
import { planCreate, planDelete, planUpdate } from '../../../../core/plan/delta.js';
import { judgeSafety } from '../../../../core/plan/safety.js';
import { emptySnapshot, nextSnapshot, type Snapshot } from '../../../../core/snapshot/snapshot.js';
import type { DesiredRow } from '../../../../core/plan/types.js';
import type { Row } from '../../../../core/model/types.js';
import { GslbError } from '../../../../runtime/errors.js';
import { buildStaticPool } from '../../../../runtime/config/static-pool.js';
import { validateConfigObject } from '../../../../runtime/config/load.js';

const ids = () => { let n = 0; return (kind: string) => `${kind}-${++n}`; };
const pool = (name: string): DesiredRow => ({ kind: 'pool', key: name, fields: { name }, source: 'pools.yaml' });
const member = (p: string, ip: string, weight = 1): DesiredRow => ({
  kind: 'member', key: `${p}/${ip}:80`, fields: { ipAddress: ip, port: 80, weight, priority: 0, enabled: true, rumUrl: null },
  refs: [{ field: 'poolId', kind: 'pool', key: p }], source: 'pools.yaml',
});
const apply = (s: Snapshot, plan: { changes: { op: string; kind: string; id: string; after?: Row }[]; revision: string }) =>
  nextSnapshot(s, plan.changes.map((c) => (c.op === 'delete' ? { op: 'delete' as const, kind: c.kind, id: c.id } : { op: 'put' as const, row: c.after! })), plan.revision, 0);

test('planChanges creates parents before children, with ids from the injected generator', () => {
  const plan = planChanges({ desired: [member('eu', '10.0.0.1'), pool('eu')], actual: emptySnapshot(), revision: 'c1', newId: ids(), tenantId: 'default' });
  assert.deepEqual(plan.changes.map((c) => [c.op, c.kind, c.id]), [['create', 'pool', 'pool-2'], ['create', 'member', 'member-1']]);
  assert.equal((plan.changes[1]!.after as Record<string, unknown>).poolId, 'pool-2');
  assert.deepEqual(plan.counts, { create: 2, update: 0, delete: 0 });
  assert.equal(plan.changes[0]!.after!.origin, 'git');
  assert.equal(plan.changes[0]!.after!.revision, 'c1');
});

test('planChanges is idempotent: the same desired state against its own result is an empty plan', () => {
  const desired = [pool('eu'), member('eu', '10.0.0.1')];
  const p1 = planChanges({ desired, actual: emptySnapshot(), revision: 'c1', newId: ids(), tenantId: 'default' });
  const s1 = apply(emptySnapshot(), p1);
  const p2 = planChanges({ desired, actual: s1, revision: 'c2', newId: ids(), tenantId: 'default' });
  assert.equal(p2.changes.length, 0);
});

test('planChanges updates with field-level before/after and prunes only git rows, children first', () => {
  const s1 = apply(emptySnapshot(), planChanges({ desired: [pool('eu'), member('eu', '10.0.0.1'), member('eu', '10.0.0.2')], actual: emptySnapshot(), revision: 'c1', newId: ids(), tenantId: 'default' }));
  const apiPool: Row = { kind: 'pool', id: 'api-pool', name: 'mine', origin: 'api', revision: 'api:1', tenantId: 'default' } as Row;
  const s2 = nextSnapshot(s1, [{ op: 'put', row: apiPool }], 'api:1', 0);
  const p = planChanges({ desired: [pool('eu'), member('eu', '10.0.0.1', 5)], actual: s2, revision: 'c2', newId: ids(), tenantId: 'default' });
  assert.deepEqual(p.changes.map((c) => [c.op, c.kind]), [['update', 'member'], ['delete', 'member']]);
  assert.deepEqual(p.changes[0]!.fields, [{ field: 'weight', before: 1, after: 5 }]);
  assert.ok(!p.changes.some((c) => c.id === 'api-pool'), 'REST-owned rows are never pruned');
});

test('deleting a git pool detaches REST services that point at it', () => {
  const s1 = apply(emptySnapshot(), planChanges({ desired: [pool('eu')], actual: emptySnapshot(), revision: 'c1', newId: ids(), tenantId: 'default' }));
  const poolId = [...s1.rows.get('pool')!.keys()][0]!;
  const svc = { kind: 'service', id: 's1', name: 'web', domain: 'web.example.', algorithm: 'round-robin', ttl: 60, poolId, chain: [], whenAllUnhealthy: 'all', asnRules: [], origin: 'api', revision: 'api:1', tenantId: 'default' } as unknown as Row;
  const s2 = nextSnapshot(s1, [{ op: 'put', row: svc }], 'api:1', 0);
  const p = planChanges({ desired: [], actual: s2, revision: 'c2', newId: ids(), tenantId: 'default' });
  const upd = p.changes.find((c) => c.kind === 'service');
  assert.equal(upd?.op, 'update');
  assert.deepEqual(upd?.fields, [{ field: 'poolId', before: poolId, after: null }]);
});

test('an unresolved reference is an error', () => {
  assert.throws(() => planChanges({ desired: [member('nope', '10.0.0.1')], actual: emptySnapshot(), revision: 'c', newId: ids(), tenantId: 'default' }), /references unknown pool "nope"/);
});

test('safety: octoDNS thresholds (more than 30 % of at least 10 existing)', () => {
  const ch = (op: 'update' | 'delete', n: number) => Array.from({ length: n }, (_, i) => ({ op, kind: 'pool', id: `${i}`, label: '', fields: [] }));
  const rows: { name: string; existing: number; changes: ReturnType<typeof ch>; safe: boolean; reason?: string }[] = [
    { name: 'below minimum existing', existing: 9, changes: ch('delete', 9), safe: true },
    { name: 'exactly 30 %', existing: 10, changes: ch('delete', 3), safe: true },
    { name: 'deletes above 30 %', existing: 10, changes: ch('delete', 4), safe: false, reason: 'TooManyDeletes' },
    { name: 'updates above 30 %', existing: 20, changes: ch('update', 7), safe: false, reason: 'TooManyUpdates' },
  ];
  for (const r of rows) {
    const v = judgeSafety(r.changes, r.existing);
    assert.equal(v.safe, r.safe, r.name);
    assert.equal(v.reason, r.reason, r.name);
  }
});

test('REST deltas refuse git-owned rows with 409 naming the file and commit', () => {
  const s1 = apply(emptySnapshot(), planChanges({ desired: [pool('eu')], actual: emptySnapshot(), revision: 'abcdef1234567890', newId: ids(), tenantId: 'default' }));
  const gitPool = [...s1.rows.get('pool')!.values()][0]!;
  for (const attempt of [
    () => planUpdate(s1, gitPool, { ...gitPool, name: 'x' } as Row, 'api:1'),
    () => planDelete(s1, gitPool, 'api:1'),
    () => planCreate(s1, { kind: 'member', id: 'm', poolId: gitPool.id, ipAddress: '10.0.0.9', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, origin: 'api', revision: '', tenantId: 'default' } as Row, 'api:1'),
  ]) {
    assert.throws(attempt, (e: unknown) => e instanceof GslbError && e.status === 409 && /pools\.yaml/.test(e.message) && /abcdef123456/.test(e.message));
  }
});

test('REST deltas refuse config rows (the static pool) with 409 naming the config file key', () => {
  const sp = buildStaticPool(validateConfigObject({ loadbalancer: { endpoints: ['192.0.2.1'] } }))!;
  for (const [row, attempt] of [
    [sp.pool, () => planUpdate(emptySnapshot(), sp.pool, { ...sp.pool, name: 'x' }, 'api:1')],
    [sp.pool, () => planDelete(emptySnapshot(), sp.pool, 'api:1')],
    [sp.members[0]!, () => planUpdate(emptySnapshot(), sp.members[0]!, { ...sp.members[0]!, enabled: false }, 'api:1')],
  ] as const) {
    assert.throws(attempt, (e: unknown) => e instanceof GslbError && e.status === 409
      && e.message.startsWith(`${row.kind === 'pool' ? 'pool "static"' : 'member 192.0.2.1:80'} is read-only: it comes from the config file (loadbalancer.endpoints)`));
  }
});

test('planDelete cascades to members, health check and geo rules', () => {
  let s = emptySnapshot();
  const base = { origin: 'api', revision: 'r', tenantId: 'default' };
  s = nextSnapshot(s, [
    { op: 'put', row: { ...base, kind: 'pool', id: 'p', name: 'p' } as Row },
    { op: 'put', row: { ...base, kind: 'member', id: 'm1', poolId: 'p', ipAddress: '10.0.0.1', port: 80 } as unknown as Row },
    { op: 'put', row: { ...base, kind: 'healthcheck', id: 'h', poolId: 'p' } as unknown as Row },
    { op: 'put', row: { ...base, kind: 'georule', id: 'g', poolId: 'p', cidr: '10.0.0.0/8', endpoint: '10.0.0.1' } as unknown as Row },
  ], 'r', 0);
  const p = planDelete(s, s.rows.get('pool')!.get('p')!, 'api:2');
  assert.deepEqual(p.changes.map((c) => c.kind).sort(), ['georule', 'healthcheck', 'member', 'pool']);
  assert.equal(p.changes.at(-1)!.kind, 'pool', 'the parent is deleted last');
  const after = apply(s, p);
  assert.equal(after.rows.get('member')!.size, 0);
  assert.equal(after.children.get('p'), undefined);
});
