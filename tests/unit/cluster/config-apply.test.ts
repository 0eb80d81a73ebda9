import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../../runtime/store/db.js';
import { ResourceStore } from '../../../core/store/resources.js';
import { EventBus } from '../../../core/events/bus.js';
import { SnapshotHolder, applyPlan } from '../../../core/apply/apply.js';
import { applyPlanSliced } from '../../../core/apply/apply-sliced.js';
import { WriteGate } from '../../../core/apply/gate.js';
import { planChanges } from '../../../core/plan/plan.js';
import type { DesiredRow, Plan } from '../../../core/plan/types.js';
import { emptySnapshot, rowsOf } from '../../../core/snapshot/snapshot.js';
import { ConfigLedger } from '../../../runtime/cluster/ledger.js';
import { applyConfigMessage } from '../../../runtime/cluster/config-apply.js';
import { longestBlock } from '../../helpers/cpu.js';

/** A node's core as the stream consumer uses it, on an in-memory database. */
function node() {
  const db = openDatabase(':memory:');
  const store = new ResourceStore(db);
  const holder = new SnapshotHolder(emptySnapshot());
  const bus = new EventBus((err) => { throw err; });
  const gate = new WriteGate();
  const ctx = { store, holder, bus, gate };
  return {
    holder, gate, ledger: new ConfigLedger(db),
    core: { holder, applyGate: gate, apply: (p: Plan, o?: Parameters<typeof applyPlan>[2]) => applyPlan(ctx, p, o), applySliced: (p: Plan, o?: Parameters<typeof applyPlan>[2]) => applyPlanSliced(ctx, p, o) },
  };
}

test('a large plan from the config stream is applied in slices: the event loop keeps turning, and every row lands once', async () => {
  const origin = node();
  const desired: DesiredRow[] = Array.from({ length: 20_000 }, (_, i) => ({ kind: 'pool', key: `p${i}`, fields: { name: `p${i}`, description: '' }, source: `pools/p${i}.yaml` }));
  let n = 0;
  const plan = planChanges({ desired, actual: origin.holder.current, revision: 'r1', newId: () => `id${n++}`, tenantId: 'default', safety: { maxChangePercent: 100, minExisting: 0 } as never });

  const b = node();
  // a timer every 2 ms: the most CPU time between its ticks is the longest block of the loop (CPU
  // time, not the wall clock: a loaded machine's pauses are no block)
  const { result: r, blockMs: longest, totalMs: took } = await longestBlock(() => applyConfigMessage({ core: b.core, ledger: b.ledger, timeoutMs: 5_000 }, 1, { plan, node: 'a', at: Date.now() }), 2);
  assert.deepEqual(r, { applied: true });
  assert.equal(rowsOf(b.holder.current, 'pool').size, 20_000);
  assert.equal(b.ledger.lastSeq(), 1);
  assert.ok(longest < took / 3, `the loop was blocked ${longest.toFixed(0)} ms of an apply of ${took.toFixed(0)} ms: not sliced`);
  assert.equal(b.gate.busy, false, 'the gate is free afterwards');
  // the same message again (published twice): applied once
  assert.deepEqual(await applyConfigMessage({ core: b.core, ledger: b.ledger, timeoutMs: 5_000 }, 2, { plan, node: 'a', at: Date.now() }), { applied: true });
  assert.equal(b.ledger.lastSeq(), 1);
});
