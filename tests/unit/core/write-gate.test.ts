import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WriteGate } from '../../../core/apply/gate.js';

test('write gate: waiters woken by one release take the gate one after another, never together', async () => {
  const gate = new WriteGate();
  const first = await gate.acquire();
  let holders = 0;
  let most = 0;
  const order: number[] = [];
  const waiter = async (n: number) => {
    const hold = await gate.acquire();
    holders++;
    most = Math.max(most, holders);
    order.push(n);
    await new Promise((r) => setTimeout(r, 5));
    holders--;
    hold.release();
  };
  const all = Promise.all([waiter(1), waiter(2), waiter(3)]);
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(order.length, 0, 'nobody takes a held gate');
  first.release();
  await all;
  assert.equal(most, 1, 'one holder at a time');
  assert.deepEqual([...order].sort(), [1, 2, 3]);
  assert.equal(gate.busy, false);
});

test('write gate: release is idempotent and a stale release does not free a later holder', async () => {
  const gate = new WriteGate();
  const a = await gate.acquire();
  a.release();
  const b = await gate.acquire();
  a.release();
  assert.equal(gate.heldBy(b), true);
  b.release();
  assert.equal(gate.idle(), undefined);
});
