import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rowsSeqOf } from '../../../core/store/resources.js';
import { applyPlan } from '../../../core/apply/apply.js';
import { applyPlanSliced } from '../../../core/apply/apply-sliced.js';
import { ApplyHooks } from '../../../core/apply/hooks.js';
import { WriteGate } from '../../../core/apply/gate.js';
import { planChanges } from '../../../core/plan/plan.js';
import { planCreate } from '../../../core/plan/delta.js';
import { childrenOf, rowsOf, type Snapshot } from '../../../core/snapshot/snapshot.js';
import type { Row } from '../../../core/model/types.js';
import { GslbError } from '../../../runtime/errors.js';
import { desiredPools, memoryStore } from '../../helpers/apply-fixtures.js';

// core/apply/apply-sliced.ts: a large plan applied in slices between turns of the event
// loop must end exactly as `applyPlan` would, and nothing may see or slip into the middle of it.

function setup() {
  const m = memoryStore();
  const hooks = new ApplyHooks((err) => { throw err; });
  const gate = new WriteGate();
  // a tiny budget: every plan here is cut into many slices
  return { ...m, hooks, gate, ctx: { store: m.store, holder: m.holder, bus: m.bus, hooks, gate, budgetMs: 0.2 } };
}

const turns = () => {
  let n = 0;
  let on = true;
  const tick = () => { if (!on) return; n++; setImmediate(tick); };
  setImmediate(tick);
  return { stop: () => { on = false; return n; } };
};

const contents = (s: Snapshot) => [...s.rows].map(([k, m]) => [k, [...m.values()]] as const);

test('a sliced apply ends as applyPlan would: rows, storage order, children, database, revision', async () => {
  const a = setup();
  const b = setup();
  const plan1 = planChanges({ desired: desiredPools(40, 5, 1), actual: a.holder.current, revision: 'r1', newId: a.newId, tenantId: 'default' });
  const plan1b = planChanges({ desired: desiredPools(40, 5, 1), actual: b.holder.current, revision: 'r1', newId: b.newId, tenantId: 'default' });
  const t = turns();
  await applyPlanSliced(a.ctx, plan1);
  assert.ok(t.stop() > 5, 'the event loop ran between slices');
  applyPlan(b.ctx, plan1b);
  assert.deepEqual(contents(a.holder.current), contents(b.holder.current));
  for (const p of rowsOf(a.holder.current, 'pool').values()) assert.equal(childrenOf(a.holder.current, p.id, 'member').length, 5);
  assert.deepEqual(a.store.loadAll(), b.store.loadAll());
  assert.equal(a.holder.rowsSeq, rowsSeqOf(a.db), 'the holder names the committed state');
  // an update and a delete of half of it, the same way
  const plan2 = planChanges({ desired: desiredPools(20, 5, 3), actual: a.holder.current, revision: 'r2', newId: a.newId, tenantId: 'default' });
  await applyPlanSliced(a.ctx, plan2, { force: true });
  applyPlan(b.ctx, planChanges({ desired: desiredPools(20, 5, 3), actual: b.holder.current, revision: 'r2', newId: b.newId, tenantId: 'default' }), { force: true });
  assert.deepEqual(contents(a.holder.current), contents(b.holder.current));
  assert.deepEqual(a.store.loadAll(), b.store.loadAll());
  assert.equal(a.holder.current.revision, 'r2');
  assert.equal(a.holder.rowsSeq, rowsSeqOf(a.db));
});

test('readers see the old snapshot until the swap, then all of the new one; events come after the swap', async () => {
  const { holder, ctx, newId, bus } = setup();
  await applyPlanSliced(ctx, planChanges({ desired: desiredPools(30, 10, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' }));
  const plan = planChanges({ desired: desiredPools(30, 10, 2), actual: holder.current, revision: 'r2', newId, tenantId: 'default' });
  const seen: string[] = [];
  let applied = 0;
  bus.on('plan_applied', () => { applied++; seen.push(holder.current.revision); });
  bus.on('ws_message', () => { assert.equal(applied, 1, 'a WebSocket message before plan_applied'); });
  let stop = false;
  let samples = 0;
  const reader = (async () => {
    while (!stop) {
      const weights = new Set<number>();
      for (const m of rowsOf<Row & { weight: number }>(holder.current, 'member').values()) weights.add(m.weight);
      assert.equal(weights.size, 1, `snapshot ${holder.current.version} mixes weights ${[...weights]}`);
      samples++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  await applyPlanSliced(ctx, plan, { force: true });
  stop = true;
  await reader;
  assert.ok(samples > 5, `the reader ran ${samples} times during the apply`);
  assert.deepEqual(seen, ['r2']);
});

test('while a sliced apply holds the gate, applyPlan is refused with 409 and a waiter goes after it', async () => {
  const { holder, ctx, newId, gate, store } = setup();
  const plan = planChanges({ desired: desiredPools(30, 10, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' });
  const running = applyPlanSliced(ctx, plan);
  await new Promise((r) => setImmediate(r));
  assert.equal(gate.busy, true);
  const small = planCreate(holder.current, { kind: 'pool', id: 'rest-pool', name: 'rest', origin: 'api', revision: 'api:1', tenantId: 'default' } as Row, 'api:1');
  assert.throws(() => applyPlan(ctx, small), (e: unknown) => e instanceof GslbError && e.status === 409);
  // a REST write waits for the gate (the API's preHandler), then plans on what the apply left
  const waited = (async () => {
    await gate.idle();
    return applyPlan(ctx, planCreate(holder.current, { kind: 'pool', id: 'rest-pool', name: 'rest', origin: 'api', revision: 'api:2', tenantId: 'default' } as Row, 'api:2'));
  })();
  await running;
  const s = await waited;
  assert.equal(rowsOf(s, 'pool').size, 31);
  assert.equal(gate.busy, false);
  assert.equal(store.loadAll().length, 331);
});

test('a failure inside the transaction rolls every slice back and frees the gate', async () => {
  const { db, holder, ctx, newId, hooks, gate, store } = setup();
  await applyPlanSliced(ctx, planChanges({ desired: desiredPools(2, 2, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' }));
  const before = holder.current;
  const seq = holder.rowsSeq;
  const plan = planChanges({ desired: desiredPools(40, 10, 1), actual: holder.current, revision: 'r2', newId, tenantId: 'default' });
  // the last row of the plan fails, after many slices were written
  db.exec(`CREATE TRIGGER fail_insert BEFORE INSERT ON resources WHEN NEW.id = '${plan.changes.at(-1)!.id}' BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
  await assert.rejects(applyPlanSliced(ctx, plan), (e: unknown) => e instanceof GslbError && e.code === 'STORE_FAILED');
  assert.equal(holder.current, before);
  assert.equal(holder.rowsSeq, seq);
  assert.equal(store.loadAll().length, 6, 'no row of the failed plan was written');
  assert.equal(gate.busy, false);
  assert.equal(db.inTransaction, false);
  db.exec('DROP TRIGGER fail_insert');
  // an inTransaction hook that throws rolls back the same way
  const off = hooks.add({ inTransaction: () => { throw new Error('hook failed'); } });
  await assert.rejects(applyPlanSliced(ctx, plan), (e: unknown) => e instanceof GslbError && e.code === 'STORE_FAILED');
  assert.equal(store.loadAll().length, 6);
  off();
  await applyPlanSliced(ctx, plan);
  assert.equal(store.loadAll().length, 40 * 11);
});

test('prepare hooks run before the transaction with the next snapshot; what they return runs at the swap', async () => {
  const { holder, ctx, newId, hooks } = setup();
  const order: string[] = [];
  hooks.add({
    prepare: async (plan, next, prev, slicer) => {
      assert.equal(holder.current, prev, 'not swapped yet');
      assert.equal(next.revision, plan.revision);
      await slicer.pause();
      order.push('prepare');
      return () => { assert.equal(holder.current, next, 'installed at the swap'); order.push('install'); };
    },
    inTransaction: () => { order.push('transaction'); },
    afterSwap: () => { order.push('afterSwap'); },
  });
  await applyPlanSliced(ctx, planChanges({ desired: desiredPools(3, 3, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' }));
  assert.deepEqual(order, ['prepare', 'transaction', 'install', 'afterSwap']);
});

test('a plan whose id is still being computed: the apply builds meanwhile and records the id once it is there', async () => {
  const { db, holder, ctx, newId, hooks } = setup();
  const plan = planChanges({ desired: desiredPools(20, 5, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' });
  let prepared = false;
  hooks.add({ prepare: async () => { prepared = true; } });
  let give!: () => void;
  const idReady = new Promise<void>((res) => { give = () => { plan.id = 'feedfacefeedface'; res(); }; });
  const applying = applyPlanSliced(ctx, plan, { idReady });
  for (let i = 0; i < 200 && !prepared; i++) await new Promise((r) => setImmediate(r));
  assert.ok(prepared, 'the snapshot and prepare hooks did not wait for the id');
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(holder.current.version, 0, 'nothing swapped before the id is there');
  assert.equal(db.inTransaction, true, 'the rows are written meanwhile; the commit waits');
  give();
  await applying;
  const meta = JSON.parse((db.prepare('SELECT meta FROM revisions ORDER BY seq DESC LIMIT 1').get() as { meta: string }).meta) as { planId: string };
  assert.equal(meta.planId, 'feedfacefeedface', 'the id given, not one hashed here');
  assert.equal(holder.current.revision, 'r1');
});

test('a plan whose id cannot be had: the apply is rolled back', async () => {
  const { db, holder, ctx, newId, gate, store } = setup();
  const plan = planChanges({ desired: desiredPools(5, 2, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' });
  const idReady = Promise.reject(new Error('worker gone'));
  idReady.catch(() => {});
  await assert.rejects(applyPlanSliced(ctx, plan, { idReady }), (e: unknown) => e instanceof GslbError && e.code === 'STORE_FAILED' && /worker gone/.test(e.message));
  assert.equal(db.inTransaction, false);
  assert.equal(holder.current.version, 0);
  assert.equal(store.loadAll().length, 0);
  assert.equal(gate.busy, false);
});

test('rows given as JSON text are stored as that text', async () => {
  const { db, holder, ctx, newId } = setup();
  const plan = planChanges({ desired: desiredPools(3, 2, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' });
  // texts that differ from JSON.stringify(after) in a way the test can see (key order)
  const rowJson = plan.changes.map((c) => JSON.stringify(Object.fromEntries(Object.entries(c.after!).reverse())));
  await applyPlanSliced(ctx, plan, { rowJson });
  const data = new Map((db.prepare('SELECT id, data FROM resources').all() as { id: string; data: string }[]).map((r) => [r.id, r.data]));
  plan.changes.forEach((c, i) => { assert.equal(data.get(c.id), rowJson[i]); });
});
