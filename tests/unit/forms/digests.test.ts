import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { openDatabase } from '../../../runtime/store/db.js';
import { SubmissionStore } from '../../../runtime/forms/submissions/store.js';
import { digestWindow } from '../../../runtime/forms/deliveries/digest.js';
import { DigestRuns } from '../../../runtime/forms/deliveries/digests.js';
import { conditionsMatch } from '../../../runtime/forms/forms/conditions.js';
import { valuesOf } from '../../../runtime/forms/intake/fields.js';
import type { FormActionRow, FormRow } from '../../../runtime/forms/forms/rows.js';
import type { MailMessage, MailPort } from '../../../runtime/ports/mail.js';

const at = (iso: string) => Date.parse(iso);

test('digest windows: the last whole hour, day, or week from Monday (UTC) before now', () => {
  const iso = (w: { start: number; end: number }) => [new Date(w.start).toISOString(), new Date(w.end).toISOString()];
  assert.deepEqual(iso(digestWindow('hourly', at('2026-11-24T10:20:00Z'))), ['2026-11-24T09:00:00.000Z', '2026-11-24T10:00:00.000Z']);
  assert.deepEqual(iso(digestWindow('hourly', at('2026-11-24T10:00:00Z'))), ['2026-11-24T09:00:00.000Z', '2026-11-24T10:00:00.000Z']);
  assert.deepEqual(iso(digestWindow('daily', at('2026-11-24T00:00:01Z'))), ['2026-11-23T00:00:00.000Z', '2026-11-24T00:00:00.000Z']);
  // 2026-11-24 is a Tuesday: the last whole week ran Monday 16th to Monday 23rd
  assert.deepEqual(iso(digestWindow('weekly', at('2026-11-24T12:00:00Z'))), ['2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
});

test('a digest gathers the non-spam submissions of its window that meet its conditions, once per window; a failed send is tried again', async () => {
  const db = openDatabase(':memory:');
  const store = new SubmissionStore(db);
  const form = { id: 'f1', name: 'Contact', tenantId: 't1' } as FormRow;
  const base = { tenantId: 't1', formId: 'f1', files: [], email: null, spamReason: null, ip: null, userAgent: null };
  const add = (iso: string, fields: Record<string, string>, spam = false) => store.insert({ ...base, createdAt: at(iso), fields, spam }, []);
  await add('2026-11-24T08:59:59Z', { n: 'before', topic: 'sales' });
  await add('2026-11-24T09:00:00Z', { n: 'first', topic: 'sales' });
  await add('2026-11-24T09:30:00Z', { n: 'spam', topic: 'sales' }, true);
  await add('2026-11-24T09:45:00Z', { n: 'other topic', topic: 'support' });
  await add('2026-11-24T09:59:59Z', { n: 'last', topic: 'sales' });
  await add('2026-11-24T10:00:00Z', { n: 'after', topic: 'sales' });
  const action = {
    id: 'a1', tenantId: 't1', formId: 'f1', type: 'email_digest', enabled: true, name: null,
    config: { to: ['team@example.test'], interval: 'hourly' }, conditions: [{ field: 'topic', op: 'equals', value: 'sales' }], conditions_mode: 'all',
  } as unknown as FormActionRow;
  const sent: MailMessage[] = [];
  let failing = true;
  const mailer: MailPort = { send: async (m) => { if (failing) throw new Error('relay down'); sent.push(m); return { accepted: m.to, response: '250' }; }, configured: () => true };
  const runs = new DigestRuns({ db, log: pino({ level: 'silent' }), mailer: () => mailer, digests: () => [{ action, form }], inWindow: (f, s, e, l) => store.inWindow(f, s, e, l) });
  const matches = (a: FormActionRow, s: { fields: Record<string, string | string[]> }) => conditionsMatch(a.conditions, a.conditions_mode, (f) => valuesOf(s.fields, f));

  assert.equal(await runs.run(at('2026-11-24T10:20:00Z'), matches), 0, 'the relay is down');
  failing = false;
  assert.equal(await runs.run(at('2026-11-24T10:21:00Z'), matches), 1, 'tried again at the next check');
  assert.equal(await runs.run(at('2026-11-24T10:59:00Z'), matches), 0, 'a window is sent once');
  const [m] = sent;
  assert.deepEqual(m!.to, ['team@example.test']);
  assert.equal(m!.subject, 'Contact: 2 submissions (2026-11-24 09:00 to 2026-11-24 10:00 UTC)');
  const listed = [...m!.text.matchAll(/n: (.+)/g)].map((x) => x[1]);
  assert.deepEqual(listed, ['first', 'last']);
  assert.equal(await runs.run(at('2026-11-24T11:05:00Z'), matches), 1, 'the next window');
  assert.match(sent[1]!.subject, /^Contact: 1 submission \(2026-11-24 10:00 to 2026-11-24 11:00 UTC\)$/);
  assert.equal(await runs.run(at('2026-11-24T12:05:00Z'), matches), 0, 'an empty window sends nothing');
  db.close();
});
