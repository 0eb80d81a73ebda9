import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../../runtime/store/db.js';
import { SubmissionStore } from '../../../runtime/forms/submissions/store.js';
import { ATTEMPTS_KEPT, Outbox } from '../../../runtime/forms/deliveries/outbox.js';

/** A database with one submission and one queued delivery of action a1; returns the outbox and the delivery id. */
async function queued() {
  const db = openDatabase(':memory:');
  const store = new SubmissionStore(db);
  await store.insert({ tenantId: 't1', formId: 'f1', createdAt: 0, fields: { a: '1' }, files: [], email: null, spam: false, spamReason: null, ip: null, userAgent: null }, ['a1']);
  const outbox = new Outbox(db);
  return { db, outbox, id: outbox.log('a1', 1, 1).rows[0]!.id };
}

test('outbox: each take records an attempt that the settle completes; the history matches the count', async () => {
  const { outbox, id } = await queued();
  outbox.take(1000, 10);
  assert.deepEqual(outbox.attemptsOf([id]).get(id), [{ delivery_id: id, n: 1, started_at: 1000, outcome: 'sending', duration_ms: null, status: null, error: null }]);
  outbox.retryAt(id, 'x answered 503', 503, 1050, 1020, 20.4);
  outbox.take(1050, 10);
  outbox.failed(id, 'refused: 127.0.0.1 is a private or reserved address', null, 1060, 3);
  outbox.requeueFailed('a1', 2000);
  outbox.take(2000, 10);
  outbox.sent(id, 202, 2010, 10);
  const h = outbox.attemptsOf([id]).get(id)!;
  assert.deepEqual(h.map((a) => [a.n, a.started_at, a.outcome, a.status, a.error, a.duration_ms]), [
    [1, 1000, 'failed', 503, 'x answered 503', 20],
    [2, 1050, 'failed', null, 'refused: 127.0.0.1 is a private or reserved address', 3],
    [3, 2000, 'sent', 202, null, 10],
  ]);
  assert.equal(outbox.log('a1', 1, 1).rows[0]!.attempts, 1, 'the retry started the count over; the history goes on');
});

test('outbox: an attempt in flight when the node stopped is marked interrupted at the next start', async () => {
  const { outbox, id } = await queued();
  outbox.take(1000, 10);
  assert.equal(outbox.recover(5000), 1);
  const [a] = outbox.attemptsOf([id]).get(id)!;
  assert.deepEqual([a!.outcome, a!.duration_ms], ['interrupted', null]);
  assert.match(a!.error!, /the node stopped before the attempt ended/);
  outbox.take(5000, 10);
  assert.deepEqual(outbox.attemptsOf([id]).get(id)!.map((x) => [x.n, x.outcome]), [[1, 'interrupted'], [2, 'sending']]);
});

test(`outbox: the last ${ATTEMPTS_KEPT} attempts of a delivery are kept; deleting the delivery deletes them`, async () => {
  const { db, outbox, id } = await queued();
  for (let i = 0; i < ATTEMPTS_KEPT + 5; i++) {
    outbox.take(i, 10);
    outbox.retryAt(id, 'down', 500, i + 1, i, 1);
  }
  const h = outbox.attemptsOf([id]).get(id)!;
  assert.deepEqual([h.length, h[0]!.n, h.at(-1)!.n], [ATTEMPTS_KEPT, 6, ATTEMPTS_KEPT + 5]);
  outbox.drop(id);
  assert.equal((db.prepare('SELECT COUNT(*) AS n FROM form_delivery_attempts').get() as { n: number }).n, 0);
});
