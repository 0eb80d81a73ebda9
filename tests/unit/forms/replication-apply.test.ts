import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../../runtime/store/db.js';
import { SubmissionStore, type NewSubmission } from '../../../runtime/forms/submissions/store.js';
import { Outbox } from '../../../runtime/forms/deliveries/outbox.js';
import { applyFormEvents } from '../../../runtime/forms/replication/apply.js';
import type { FormStreamEvent } from '../../../runtime/forms/replication/events.js';
import { recordDigestRun } from '../../../runtime/forms/deliveries/digests.js';

const sub = (n: string, spam = false): NewSubmission => ({
  tenantId: 't1', formId: 'f1', createdAt: Date.UTC(2026, 10, 28), fields: { n }, files: [], email: null, spam, spamReason: spam ? 'honeypot field filled' : null, ip: null, userAgent: null,
});

function setup() {
  const db = openDatabase(':memory:');
  const store = new SubmissionStore(db);
  const outbox = new Outbox(db);
  const used: [string, number][] = [];
  const t = { store, outbox, keyUsed: (id: string, at: number) => used.push([id, at]), digestCovered: (id: string, end: number, at: number, n: number) => recordDigestRun(db, id, end, at, n), now: () => 5_000 };
  const apply = (items: { seq: number; e: FormStreamEvent }[]) => db.transaction(() => applyFormEvents(t, items))();
  const deliveries = () => db.prepare('SELECT submission_id AS sid, action_id AS a, event, state, cluster_key AS k FROM form_deliveries ORDER BY id').all();
  return { db, store, outbox, apply, deliveries, used };
}

// Each row: the stream's messages, applied twice (a node applies its own message at once, then
// again from the stream): the second time changes nothing and emits nothing.
test('applying the form stream: each message is idempotent and keys its deliveries alike on every node', () => {
  const rows: { name: string; given: { seq: number; e: FormStreamEvent }[]; want: { events: string[]; deliveries: unknown[]; usage: number } }[] = [
    {
      name: 'a submission takes its stream sequence as id, its deliveries keyed <seq>.<sid>.<action>',
      given: [{ seq: 7, e: { t: 'submission', s: sub('x'), actionIds: ['a1', 'a2'] } }],
      want: {
        events: ['submission.created 7'], usage: 1,
        deliveries: [{ sid: 7, a: 'a1', event: 'submission.created', state: 'pending', k: '7.7.a1' }, { sid: 7, a: 'a2', event: 'submission.created', state: 'pending', k: '7.7.a2' }],
      },
    },
    {
      name: 'spam is stored, not counted, and emits nothing',
      given: [{ seq: 3, e: { t: 'submission', s: sub('y', true), actionIds: [] } }],
      want: { events: [], deliveries: [], usage: 0 },
    },
    {
      name: 'a claim marks once and queues its subscribers (a second claim message nothing); a replay and a reminder queue under their own sequence',
      given: [
        { seq: 1, e: { t: 'submission', s: sub('z'), actionIds: [] } },
        { seq: 2, e: { t: 'claim', tenantId: 't1', formId: 'f1', submissionId: 1, by: 'ann', at: 100, actionIds: ['w1'] } },
        { seq: 3, e: { t: 'claim', tenantId: 't1', formId: 'f1', submissionId: 1, by: 'bob', at: 101, actionIds: ['w1'] } },
        { seq: 4, e: { t: 'replay', formId: 'f1', jobs: [{ submissionId: 1, actionIds: ['a1'] }], at: 200 } },
        { seq: 5, e: { t: 'reminder', formId: 'f1', jobs: [{ submissionId: 1, actionIds: ['m1'] }], at: 300 } },
      ],
      want: {
        events: ['submission.created 1', 'submission.claimed 1 ann'], usage: 1,
        deliveries: [
          { sid: 1, a: 'w1', event: 'submission.claimed', state: 'pending', k: '2.1.w1' },
          { sid: 1, a: 'a1', event: 'submission.created', state: 'pending', k: '4.1.a1' },
          { sid: 1, a: 'm1', event: 'submission.reminder', state: 'pending', k: '5.1.m1' },
        ],
      },
    },
    {
      name: "another node's outcome is recorded; a retry queues the failed ones again",
      given: [
        { seq: 1, e: { t: 'submission', s: sub('q'), actionIds: ['a1', 'a2'] } },
        { seq: 2, e: { t: 'settled', key: '1.1.a1', d: { state: 'sent', attempts: 1, status: 200, error: null, nextAt: 10, sentAt: 10 }, node: 'b' } },
        { seq: 3, e: { t: 'settled', key: '1.1.a2', d: { state: 'failed', attempts: 1, status: 400, error: 'x answered 400', nextAt: 10, sentAt: null }, node: 'b' } },
        { seq: 4, e: { t: 'retry', actionId: 'a2', at: 20 } },
      ],
      want: {
        events: ['submission.created 1'], usage: 1,
        deliveries: [{ sid: 1, a: 'a1', event: 'submission.created', state: 'sent', k: '1.1.a1' }, { sid: 1, a: 'a2', event: 'submission.created', state: 'pending', k: '1.1.a2' }],
      },
    },
  ];
  for (const r of rows) {
    const s = setup();
    const first = s.apply(r.given);
    assert.deepEqual(first.events.map((e) => [e.type, e.payload.submission_id, e.payload.by].filter((x) => x !== undefined).join(' ')), r.want.events, r.name);
    const again = s.apply(r.given);
    assert.deepEqual(again.events, [], `${r.name}: nothing emitted twice`);
    assert.deepEqual(s.deliveries(), r.want.deliveries, r.name);
    assert.equal(s.store.submissionsInMonth('t1', Date.UTC(2026, 10, 28)), r.want.usage, `${r.name}: usage`);
  }
});

test("a key's use from another node is kept when it is later than the one recorded", () => {
  const s = setup();
  s.apply([{ seq: 1, e: { t: 'keyUsed', keyId: 'k1', at: 50 } }]);
  assert.deepEqual(s.used, [['k1', 50]]);
});

test('a digest window another node covered is recorded; an earlier one arriving later changes nothing', () => {
  const s = setup();
  s.apply([{ seq: 1, e: { t: 'digest', actionId: 'd1', windowEnd: 7_200_000, sentAt: 7_200_500, submissions: 3 } }]);
  s.apply([{ seq: 2, e: { t: 'digest', actionId: 'd1', windowEnd: 3_600_000, sentAt: 3_600_500, submissions: 1 } }]);
  assert.deepEqual(s.db.prepare('SELECT action_id, window_end, submissions FROM form_digest_runs').all(), [{ action_id: 'd1', window_end: 7_200_000, submissions: 3 }]);
});
