import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReconcileLoop } from '../../../gitops/loop.js';
import { transient, stalled, type ReconcileError } from '../../../gitops/errors.js';
import type { Reconciler, ReconcileRequest } from '../../../gitops/reconcile.js';
import type { GitOpsStatus } from '../../../gitops/status.js';

/** A reconciler stand-in that records calls and takes `ms` per run. */
function fakeReconciler(ms: number, outcome: () => ReconcileError | undefined = () => undefined) {
  const calls: ReconcileRequest[] = [];
  let active = 0;
  let maxActive = 0;
  const status = { failures: 0, nextAttemptAt: null } as unknown as GitOpsStatus;
  const r = {
    status,
    async reconcile(req: ReconcileRequest) {
      calls.push(req);
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise((res) => setTimeout(res, ms));
      active--;
      const error = outcome();
      status.failures = error ? status.failures + 1 : 0;
      return error ? { status, error } : { status };
    },
  };
  return { r: r as unknown as Reconciler, calls, max: () => maxActive };
}

test('one reconcile at a time; triggers during a run coalesce into one follow-up that keeps force', async () => {
  const f = fakeReconciler(30);
  const loop = new ReconcileLoop(f.r, { intervalMs: 3_600_000 });
  const first = loop.trigger({ trigger: { kind: 'manual', receivedAt: 0 } });
  const a = loop.trigger({ trigger: { kind: 'webhook', receivedAt: 1, after: 'x' } });
  const b = loop.trigger({ trigger: { kind: 'manual', receivedAt: 2 }, force: true });
  await Promise.all([first, a, b]);
  await loop.stop();
  assert.equal(f.max(), 1, 'never two reconciles at once');
  assert.equal(f.calls.length, 2, 'the two queued triggers ran as one');
  assert.equal(f.calls[1]!.force, true);
  assert.equal(f.calls[1]!.trigger.kind, 'webhook', 'a webhook trigger is kept for latency accounting');
});

test('backoff: transient failures double the delay up to the poll interval; stalled ones wait for the interval', () => {
  const f = fakeReconciler(0);
  const loop = new ReconcileLoop(f.r, { intervalMs: 30_000, backoffBaseMs: 1000 });
  const st = (failures: number) => ({ failures } as unknown as GitOpsStatus);
  const rows: [string, ReconcileError | undefined, number, number][] = [
    ['success', undefined, 0, 30_000],
    ['1st transient', transient('FetchFailed', 'x'), 1, 1000],
    ['2nd transient', transient('FetchFailed', 'x'), 2, 2000],
    ['4th transient', transient('FetchFailed', 'x'), 4, 8000],
    ['10th transient (capped)', transient('FetchFailed', 'x'), 10, 30_000],
    ['stalled', stalled('SignatureMissing', 'x'), 3, 30_000],
  ];
  for (const [name, error, failures, want] of rows) assert.equal(loop.nextDelay(error ? { status: st(failures), error } : { status: st(failures) }), want, name);
});

test('polling runs on the interval and stops cleanly', async () => {
  const f = fakeReconciler(1);
  const loop = new ReconcileLoop(f.r, { intervalMs: 20, jitter: 0 });
  loop.start();
  const deadline = Date.now() + 3000;
  while (f.calls.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await loop.stop();
  const n = f.calls.length;
  assert.ok(n >= 3, `polled ${n} times`);
  assert.equal(f.calls[0]!.trigger.kind, 'start');
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(f.calls.length, n, 'no reconcile after stop');
});

test('a reconcile that throws does not stop the loop', async () => {
  let calls = 0;
  const status = { failures: 0, nextAttemptAt: null } as unknown as GitOpsStatus;
  const r = { status, async reconcile() { calls++; throw new Error('boom'); } } as unknown as Reconciler;
  const loop = new ReconcileLoop(r, { intervalMs: 20, backoffBaseMs: 10, jitter: 0 });
  const first = await loop.trigger({ trigger: { kind: 'manual', receivedAt: 0 } });
  assert.equal(first.error?.errorClass, 'transient');
  const deadline = Date.now() + 3000;
  while (calls < 3 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
  await loop.stop();
  assert.ok(calls >= 3, `ran ${calls} times`);
});
