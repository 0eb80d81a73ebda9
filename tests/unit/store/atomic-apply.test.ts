import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyPlan } from '../../../core/apply/apply.js';
import { planChanges } from '../../../core/plan/plan.js';
import { childrenOf, rowsOf } from '../../../core/snapshot/snapshot.js';
import { GslbError } from '../../../runtime/errors.js';
import { desiredPools, memoryStore } from '../../helpers/apply-fixtures.js';

function setup() {
  const m = memoryStore();
  return { ...m, ctx: { store: m.store, holder: m.holder, bus: m.bus } };
}

test('a reader never observes half of a multi-row change', async () => {
  const { holder, ctx, newId } = setup();
  applyPlan(ctx, planChanges({ desired: desiredPools(50, 10, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' }));
  // A reader samples the snapshot on every turn of the event loop while a writer applies
  // alternating plans that change every member's weight. Every sample must be uniform.
  let stop = false;
  let samples = 0;
  const reader = (async () => {
    while (!stop) {
      const s = holder.current;
      const weights = new Set<number>();
      for (const m of rowsOf<{ weight: number } & import('../../../core/model/types.js').Row>(s, 'member').values()) weights.add(m.weight);
      assert.equal(weights.size, 1, `snapshot ${s.version} mixes weights ${[...weights]}`);
      for (const p of rowsOf(s, 'pool').values()) assert.equal(childrenOf(s, p.id, 'member').length, 10);
      samples++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  for (let i = 2; i <= 40; i++) {
    applyPlan(ctx, planChanges({ desired: desiredPools(50, 10, i), actual: holder.current, revision: `r${i}`, newId, tenantId: 'default' }), { force: true });
    await new Promise((r) => setImmediate(r));
  }
  stop = true;
  await reader;
  assert.ok(samples >= 30, `reader sampled ${samples} times`);
});

test('a failed SQLite commit leaves the snapshot and the database as they were', () => {
  const { db, holder, ctx, newId, store } = setup();
  applyPlan(ctx, planChanges({ desired: desiredPools(2, 2, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' }));
  const before = holder.current;
  const plan = planChanges({ desired: desiredPools(3, 2, 1), actual: holder.current, revision: 'r2', newId, tenantId: 'default' });
  db.exec(`CREATE TRIGGER fail_insert BEFORE INSERT ON resources WHEN NEW.id = '${plan.changes.at(-1)!.id}' BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
  assert.throws(() => applyPlan(ctx, plan), (e: unknown) => e instanceof GslbError && e.code === 'STORE_FAILED');
  assert.equal(holder.current, before, 'the snapshot reference did not change');
  assert.equal(store.loadAll().length, 6, 'no row of the failed plan was written');
});

test('a plan made against an older snapshot is refused; an unsafe plan needs force', () => {
  const { holder, ctx, newId } = setup();
  const stale = planChanges({ desired: desiredPools(1, 1, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' });
  applyPlan(ctx, planChanges({ desired: desiredPools(12, 0, 1), actual: holder.current, revision: 'r0', newId, tenantId: 'default' }));
  assert.throws(() => applyPlan(ctx, stale), (e: unknown) => e instanceof GslbError && e.status === 409);
  const unsafe = planChanges({ desired: [], actual: holder.current, revision: 'r2', newId, tenantId: 'default' });
  assert.equal(unsafe.safety.reason, 'TooManyDeletes');
  assert.throws(() => applyPlan(ctx, unsafe), (e: unknown) => e instanceof GslbError && e.code === 'CTRL_STALLED');
  applyPlan(ctx, unsafe, { force: true });
  assert.equal(rowsOf(holder.current, 'pool').size, 0);
});

test('rows survive a restart in storage order, with origin and revision', () => {
  const { holder, ctx, newId, store } = setup();
  applyPlan(ctx, planChanges({ desired: desiredPools(2, 3, 1), actual: holder.current, revision: 'abc', newId, tenantId: 'default' }));
  const rows = store.loadAll();
  assert.equal(rows.length, 8);
  assert.ok(rows.every((r) => r.origin === 'git' && r.revision === 'abc'));
  assert.deepEqual(rows.map((r) => r.kind).slice(0, 2), ['pool', 'pool']);
});
