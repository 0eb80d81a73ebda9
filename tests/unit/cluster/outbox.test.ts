import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../../runtime/store/db.js';
import { ResourceStore } from '../../../core/store/resources.js';
import { EventBus } from '../../../core/events/bus.js';
import { SnapshotHolder, applyPlan } from '../../../core/apply/apply.js';
import { applyPlanSliced } from '../../../core/apply/apply-sliced.js';
import { ApplyHooks } from '../../../core/apply/hooks.js';
import { WriteGate } from '../../../core/apply/gate.js';
import { planChanges } from '../../../core/plan/plan.js';
import type { DesiredRow, Plan } from '../../../core/plan/types.js';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';
import { ConfigLedger } from '../../../runtime/cluster/ledger.js';
import { configMsgJsonSteps, outboxHook } from '../../../runtime/cluster/outbox.js';
import type { ConfigMsg } from '../../../runtime/cluster/config-msg.js';
import { messageBytes, sha256Hex } from '../../../runtime/cluster/plan-ref.js';
import { threadCpuMs } from '../../helpers/cpu.js';

const poolPlan = (count: number, revision: string): Plan => {
  const desired: DesiredRow[] = Array.from({ length: count }, (_, i) => ({ kind: 'pool', key: `p${i}`, fields: { name: `p${i}`, description: `pool ${i} "quoted" \u2028` }, source: `pools/p${i}.yaml` }));
  let n = 0;
  return planChanges({ desired, actual: emptySnapshot(), revision, newId: () => `${revision}-${n++}`, tenantId: 'default', safety: { maxChangePercent: 100, minExisting: 0 } as never });
};

const finish = (steps: Generator<void, string, void>): string => { for (;;) { const r = steps.next(); if (r.done) return r.value; } };

test('configMsgJsonSteps gives the text of JSON.stringify, for 0, 1 and several steps of changes', () => {
  for (const count of [0, 1, 499, 500, 1201]) {
    const plan = count === 0 ? { ...poolPlan(1, 'r0'), changes: [] } : poolPlan(count, `r${count}`);
    const msg: ConfigMsg = { plan, node: 'a', at: 123, signer: 'ABCD' };
    assert.equal(finish(configMsgJsonSteps(msg)), JSON.stringify(msg), `${count} changes`);
  }
});

test('a large local plan: its outbox row is made in slices before the transaction, and is the message as JSON', async () => {
  const db = openDatabase(':memory:');
  const ledger = new ConfigLedger(db);
  const hooks = new ApplyHooks((err) => { throw err; });
  // around the outbox hook (hooks run in registration order): how long its work in the transaction
  // takes, in this thread's CPU time (a loaded machine's pauses are not its work)
  let t1 = 0;
  let t2 = 0;
  hooks.add({ inTransaction: () => { t1 = threadCpuMs(); } });
  hooks.add(outboxHook(ledger, 'a'));
  hooks.add({ inTransaction: () => { t2 = threadCpuMs(); } });
  const ctx = { store: new ResourceStore(db), holder: new SnapshotHolder(emptySnapshot()), bus: new EventBus((err) => { throw err; }), gate: new WriteGate(), hooks };
  const plan = poolPlan(40_000, 'big');
  // as a plan from the offload worker: its id arrives during the apply (ApplyOptions.idReady)
  const id = 'sha256:plan-id-set-late';
  assert.equal(plan.id, undefined);
  let setId!: () => void;
  const idReady = new Promise<void>((resolve) => { setId = () => { plan.id = id; resolve(); }; });
  // after every other hook's prepare (the outbox's included), before the transaction
  hooks.add({ prepare: async () => { setId(); } });
  const before = ledger.pending().length;
  await applyPlanSliced(ctx, plan, { meta: { signer: 'FP' }, idReady });
  const rows = ledger.pending();
  assert.equal(rows.length, before + 1);
  assert.equal(ledger.pendingCount(), rows.length);
  assert.deepEqual(ledger.pendingRevisions(), rows.map((r) => r.revision));
  assert.equal(ledger.pendingWhole().length, 0, 'a message written in parts is not read whole');
  const next = ledger.next()!;
  assert.equal(next.revision, 'big');
  assert.equal(next.texts.length, 80, 'the publisher gets the parts, not their join');
  assert.equal(next.texts.join(''), rows[0]!.body);
  const bytes = await messageBytes(next.texts);
  assert.deepEqual(Buffer.from(bytes.bytes), Buffer.from(rows[0]!.body, 'utf8'), 'encoded a part at a time: the bytes of the whole');
  assert.equal(bytes.sha256, sha256Hex(new TextEncoder().encode(rows[0]!.body)));
  const msg = JSON.parse(rows[0]!.body) as ConfigMsg;
  assert.equal(msg.plan.id, id, 'the queued plan carries the id that arrived during the apply');
  assert.equal(rows[0]!.body, JSON.stringify({ plan, node: 'a', at: msg.at, signer: 'FP' }));
  // written in parts of 500 changes, between turns of the event loop
  const parts = db.prepare("SELECT COUNT(*) AS n FROM cluster_outbox_parts WHERE revision = 'big'").get() as { n: number };
  assert.equal(parts.n, 80);
  assert.equal(msg.node, 'a');
  assert.equal(msg.signer, 'FP');
  assert.equal(msg.plan.changes.length, 40_000);
  assert.deepEqual(msg.plan.changes[39_999], JSON.parse(JSON.stringify(plan.changes[39_999])));
  // no whole-plan JSON in the transaction's turn, only the row's insert: against making the row
  // there (JSON.stringify and the insert, in a transaction, as a one-turn apply does)
  const t = threadCpuMs();
  db.transaction(() => { ledger.enqueue('again', JSON.stringify({ plan, node: 'a', at: 0, signer: 'FP' }), 0); })();
  const inOneTurn = threadCpuMs() - t;
  assert.ok(t2 - t1 < inOneTurn * 0.25, `the outbox hook took ${(t2 - t1).toFixed(0)} ms in the transaction's last turn; making the row there takes ${inOneTurn.toFixed(0)} ms`);
  ledger.acknowledged('again');
  ledger.acknowledged('big');
  assert.equal((db.prepare('SELECT COUNT(*) AS n FROM cluster_outbox_parts').get() as { n: number }).n, 0, 'an acknowledged plan takes its parts with it');

  // the one-turn apply writes the same row (made in its transaction)
  const small = poolPlan(3, 'small');
  applyPlan(ctx, { ...small, baseVersion: ctx.holder.current.version }, { meta: { signer: 'FP' } });
  const row = ledger.pending().find((r) => r.revision === 'small')!;
  assert.equal((JSON.parse(row.body) as ConfigMsg).plan.changes.length, 3);
  assert.deepEqual(ledger.pendingWhole(), [row], 'a message of one text is read whole');
  assert.deepEqual(ledger.next(), { revision: 'small', texts: [row.body] });
});
