import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { openDatabase } from '../../../runtime/store/db.js';
import { Outbox } from '../../../runtime/forms/deliveries/outbox.js';
import { DeliveryWorker, type WorkerDeps } from '../../../runtime/forms/deliveries/worker.js';
import type { SendOutcome } from '../../../runtime/forms/deliveries/sender.js';
import type { FormActionRow, FormRow } from '../../../runtime/forms/forms/rows.js';
import type { SubmissionRecord } from '../../../runtime/forms/submissions/types.js';

// How the delivery worker stops (docs/forms.md "Deliveries", docs/architecture.md "Shutdown"):
// attempts in flight get a grace, then are aborted and left for the next start.

const ACTION: FormActionRow = {
  id: 'a1', kind: 'formaction', origin: 'api', revision: 'api:1', tenantId: 'default', formId: 'f1', type: 'webhook', name: null, enabled: true,
  config: { url: 'http://192.0.2.1/hook' }, conditions: [], conditions_mode: 'all', createdAt: null, updatedAt: null,
};
const FORM = { id: 'f1', name: 'Contact' } as FormRow;
const SUB: SubmissionRecord = {
  id: 1, tenantId: 'default', formId: 'f1', createdAt: 0, fields: { email: 'a@example.com' }, files: [], email: 'a@example.com',
  spam: false, spamReason: null, ip: null, userAgent: null, claimedAt: null, claimedBy: null,
};
const OK: SendOutcome = { ok: true, status: 200, detail: 'HTTP 200', retryable: false, durationMs: 1 };

/** A queue with one due delivery (its submission row is not needed: foreign keys off). */
function queueWithOne(): { outbox: Outbox; state: () => string } {
  const db = openDatabase(':memory:');
  db.pragma('foreign_keys = OFF');
  db.prepare("INSERT INTO form_deliveries (submission_id, form_id, action_id, state, next_at, created_at, updated_at) VALUES (1, 'f1', 'a1', 'pending', 0, 0, 0)").run();
  return { outbox: new Outbox(db), state: () => (db.prepare('SELECT state FROM form_deliveries').get() as { state: string }).state };
}

function workerWith(outbox: Outbox, send: WorkerDeps['send'], stopGraceMs: number): DeliveryWorker {
  return new DeliveryWorker({
    outbox, send, stopGraceMs, log: pino({ level: 'silent' }),
    action: () => ACTION, form: () => FORM, submission: () => SUB, pause: () => {},
    settings: () => ({ pollIntervalMs: 10_000, concurrency: 4, retryDelaysMs: [10], pauseAfterFailures: 10 }),
  });
}

test('stop: an attempt that does not end within the grace is aborted, its row stays in flight, and the next start sends it again', async () => {
  const { outbox, state } = queueWithOne();
  let started!: () => void;
  const inFlight = new Promise<void>((r) => { started = r; });
  let sawAbort = false;
  // a receiver that never answers: the attempt ends only when its signal aborts
  const hanging = (_a: FormActionRow, _c: unknown, signal: AbortSignal) => new Promise<SendOutcome>((resolve) => {
    started();
    signal.addEventListener('abort', () => { sawAbort = true; resolve({ ok: false, status: null, detail: 'aborted', retryable: false, durationMs: 1 }); });
  });
  const first = workerWith(outbox, hanging, 20);
  first.start();
  await inFlight;
  await first.stop();
  assert.equal(sawAbort, true);
  assert.equal(state(), 'sending', 'the aborted attempt is not recorded as failed');

  let resent!: () => void;
  const sentAgain = new Promise<void>((r) => { resent = r; });
  const second = workerWith(outbox, async () => { resent(); return OK; }, 60_000);
  second.start();
  await sentAgain;
  await second.stop();
  assert.equal(state(), 'sent');
});

test('stop: an attempt that ends within the grace is recorded, not aborted', async () => {
  const { outbox, state } = queueWithOne();
  let started!: () => void;
  const inFlight = new Promise<void>((r) => { started = r; });
  let finish!: () => void;
  let aborted = false;
  const w = workerWith(outbox, (_a, _c, signal) => new Promise<SendOutcome>((resolve) => {
    signal.addEventListener('abort', () => { aborted = true; });
    finish = () => resolve(OK);
    started();
  }), 60_000);
  w.start();
  await inFlight;
  const stopping = w.stop();
  finish();
  await stopping;
  assert.equal(aborted, false);
  assert.equal(state(), 'sent');
});

test('stop: an attempt that does not heed the abort does not hold the stop, and its late outcome is not recorded', async () => {
  const { outbox, state } = queueWithOne();
  let started!: () => void;
  const inFlight = new Promise<void>((r) => { started = r; });
  let finish!: () => void;
  let settled!: () => void;
  const done = new Promise<void>((r) => { settled = r; });
  // like a mail server that never greets: the signal is ignored, the attempt ends when the test says
  const w = workerWith(outbox, () => new Promise<SendOutcome>((resolve) => {
    finish = () => { resolve(OK); setImmediate(settled); };
    started();
  }), 20);
  w.start();
  await inFlight;
  await w.stop();
  assert.equal(state(), 'sending');
  finish();
  await done;
  assert.equal(state(), 'sending', 'an outcome that arrives after the abort is left for the next start');
});
