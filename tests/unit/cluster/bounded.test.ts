import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bounded } from '../../../runtime/cluster/bounded.js';

test('bounded: work that settles in time wins and no timeout is told; work that never settles is let go after the limit', async () => {
  let late = 0;
  let done = false;
  await bounded(new Promise<void>((r) => setTimeout(() => { done = true; r(); }, 10)), 1_000, () => { late++; });
  assert.deepEqual([done, late], [true, 0]);
  const t0 = Date.now();
  // (the limit's timer does not keep a process alive: this test does, while it waits)
  const keep = setInterval(() => {}, 1_000);
  await bounded(new Promise<void>(() => {}), 50, () => { late++; }).finally(() => clearInterval(keep));
  assert.equal(late, 1, 'let go by the limit: the timeout was told');
  assert.ok(Date.now() - t0 >= 45, `not before the limit of 50 ms (${Date.now() - t0})`);
  await assert.rejects(bounded(Promise.reject(new Error('kv down')), 1_000, () => { late++; }), /kv down/);
  assert.equal(late, 1);
});
