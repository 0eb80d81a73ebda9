import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FormEvent } from '../../core/events/bus.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// Submissions over /public/v1 (forms-api.md §3 rules 1, 5, 7; §4 rows /submission, /claim,
// /replay; docs/forms.md "Submissions"): the list and its filters, spam listed only with getSpam,
// claim and its event, replay queueing deliveries, workspaces and single-form keys apart.

let d: TestDaemon;
const events: FormEvent[] = [];
let workspaces = 0;

before(async () => {
  d = await startTestDaemon({ forms: { rateLimits: { perIpPerMinute: 100_000 }, deliveries: { enabled: false } } } as never);
  d.core.bus.on('form_event', (e) => events.push(e));
});
after(async () => { await d?.stop(); });

const json = { 'content-type': 'application/json', accept: 'application/json' };

/** A fresh workspace with a form: its client, key name and the form id. */
async function setup(settings: Record<string, unknown> = {}) {
  const tenantId = `sub${++workspaces}`;
  const key = addFormKey(d, { tenantId, name: `reader ${workspaces}` });
  const call = publicClient(d, key.key);
  const res = await call('POST', '/form', { name: 'Contact', ...settings });
  assert.equal(res.status, 201);
  return { call, tenantId, keyName: `reader ${workspaces}`, id: res.body.id as string };
}

/** Posts fields as JSON to the public endpoint; returns the status. */
async function submit(id: string, fields: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${d.url}/f/${id}`, { method: 'POST', headers: json, body: JSON.stringify(fields) });
  await res.arrayBuffer();
  return res.status;
}

/** Queued deliveries of a form, by state. */
const deliveries = (formId: string) => d.core.db.prepare('SELECT action_id AS action, state, COUNT(*) AS n FROM form_deliveries WHERE form_id = ? GROUP BY action_id, state ORDER BY action_id').all(formId);

test('list: newest first, pages, sort and order; spam only with getSpam; claimed, since and until filters', async () => {
  const { call, id } = await setup({ max_links: 1 });
  for (let i = 1; i <= 5; i++) assert.equal(await submit(id, { n: i }), 200);
  assert.equal(await submit(id, { n: 6, fc_honeypot: 'x' }), 200);
  assert.equal(await submit(id, { n: 7, m: 'http://a.example http://b.example' }), 200);

  const all = await call('GET', `/form/${id}/submission`);
  assert.equal(all.status, 200);
  assert.deepEqual([all.body.total, all.body.page, all.body.limit], [5, 1, 20]);
  assert.deepEqual(all.body.data.map((s: { data: { n: string } }) => s.data.n), ['5', '4', '3', '2', '1']);
  const page2 = await call('GET', `/form/${id}/submission?limit=2&page=2&order=asc&sort=id`);
  assert.deepEqual(page2.body.data.map((s: { data: { n: string } }) => s.data.n), ['3', '4']);

  const spam = await call('GET', `/form/${id}/submission?getSpam=true&order=asc`);
  assert.equal(spam.body.total, 7);
  assert.deepEqual(spam.body.data.slice(5).map((s: { spam: boolean; spam_reason: string }) => [s.spam, s.spam_reason]), [
    [true, 'honeypot field filled'],
    [true, '2 links (at most 1 allowed)'],
  ]);
  for (const v of ['', '1']) assert.equal((await call('GET', `/form/${id}/submission?getSpam=${v}`)).body.total, 7, `getSpam=${v}`);
  assert.equal((await call('GET', `/form/${id}/submission?getSpam=false`)).body.total, 5);

  const first = all.body.data[4].id as number;
  assert.equal((await call('POST', `/form/${id}/submission/${first}/claim`, { form_id: id, submission_id: first })).status, 200);
  assert.deepEqual((await call('GET', `/form/${id}/submission?claimed=true`)).body.data.map((s: { id: number }) => s.id), [first]);
  assert.equal((await call('GET', `/form/${id}/submission?claimed=false`)).body.total, 4);
  assert.equal((await call('GET', `/form/${id}/submission?since=2000-01-01&until=2999-01-01`)).body.total, 5);
  assert.equal((await call('GET', `/form/${id}/submission?since=2999-01-01`)).body.total, 0);

  for (const [q, want] of [
    ['limit=101', /^limit: must be a whole number from 1 to 100$/],
    ['page=0', /^page: must be a whole number >= 1$/],
    ['sort=name', /sort/],
    ['order=up', /order/],
    ['getSpam=maybe', /getSpam/],
    ['since=yesterday', /^since: must be an ISO 8601 date or time/],
  ] as const) {
    const res = await call('GET', `/form/${id}/submission?${q}`);
    assert.equal(res.status, 400, q);
    assert.equal(res.body.name, 'validation_error');
    assert.match(res.body.message, want, q);
  }
});

test('claim: by defaults to the key name, marks it claimed once (409 after), emits submission.claimed; the path ids win', async () => {
  const { call, id, keyName, tenantId } = await setup();
  await submit(id, { email: 'a@example.com' });
  await submit(id, { email: 'b@example.com' });
  const [s2, s1] = (await call('GET', `/form/${id}/submission`)).body.data.map((s: { id: number }) => s.id) as number[];
  events.length = 0;
  const res = await call('POST', `/form/${id}/submission/${s1}/claim`, { form_id: 'other', submission_id: 999_999 });
  assert.equal(res.status, 200);
  assert.equal(res.body.id, s1);
  assert.deepEqual([res.body.claimed, res.body.claimed_by], [true, keyName]);
  assert.match(res.body.claimed_at, /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual(events.map((e) => [e.type, e.tenantId, e.formId, e.payload.submission_id, e.payload.by]), [['submission.claimed', tenantId, id, s1, keyName]]);

  const again = await call('POST', `/form/${id}/submission/${s1}/claim`, { form_id: id, submission_id: s1, by: 'someone' });
  assert.equal(again.status, 409);
  assert.equal(again.body.name, 'conflict');
  assert.match(again.body.message, new RegExp(`^submission ${s1} was claimed by ${keyName} at `));
  assert.equal(events.length, 1, 'no event for a refused claim');

  const named = await call('POST', `/form/${id}/submission/${s2}/claim`, { form_id: id, submission_id: s2, by: 'ops@example.com' });
  assert.equal(named.body.claimed_by, 'ops@example.com');
  assert.equal((await call('POST', `/form/${id}/submission/999999/claim`, { form_id: id, submission_id: 999999 })).status, 404);
  assert.equal((await call('POST', `/form/${id}/submission/${s1}/claim`, { form_id: id })).status, 400, 'submission_id is required in the body');
  assert.equal((await call('POST', `/form/${id}/submission/abc/claim`, { form_id: id, submission_id: 1 })).status, 400);
});

test('new submissions queue a delivery per enabled action whose conditions they meet; replay queues again; spam queues nothing', async () => {
  const { call, id } = await setup();
  const add = async (body: Record<string, unknown>) => (await call('POST', `/form/${id}/action`, { form_id: id, type: 'webhook', config: { url: 'https://example.com/hook' }, ...body })).body.id as string;
  const always = await add({ name: 'always' });
  const urgent = await add({ name: 'urgent', conditions: [{ field: 'priority', op: 'equals', value: 'high' }] });
  await add({ name: 'off', enabled: false });
  await submit(id, { priority: 'high' });
  await submit(id, { priority: 'low' });
  await submit(id, { priority: 'high', fc_honeypot: 'bot' });
  const want = [{ action: always, state: 'pending', n: 2 }, { action: urgent, state: 'pending', n: 1 }].sort((a, b) => a.action.localeCompare(b.action));
  assert.deepEqual(deliveries(id), want);

  const ids = (await call('GET', `/form/${id}/submission?getSpam=true&order=asc`)).body.data.map((s: { id: number }) => s.id) as number[];
  const res = await call('POST', `/form/${id}/replay`, { form_id: id, submission_ids: ids });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { form_id: id, submissions: 3, queued: 5 }, 'spam is replayed when named');
  const unknown = await call('POST', `/form/${id}/replay`, { form_id: id, submission_ids: [ids[0], 999_998, 999_999] });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.message, `submissions not found in form ${id}: 999998, 999999`);
  const tooMany = await call('POST', `/form/${id}/replay`, { form_id: id, submission_ids: Array.from({ length: 101 }, (_, i) => i + 1) });
  assert.equal(tooMany.status, 400);
  assert.match(tooMany.body.message, /submission_ids/);
  assert.equal((await call('POST', `/form/${id}/replay`, { form_id: id, submission_ids: [] })).status, 400);
  assert.equal((await call('POST', `/form/${id}/replay`, { submission_ids: [1] })).status, 400, 'form_id is required in the body');
  assert.equal(deliveries(id).reduce((n: number, r: unknown) => n + (r as { n: number }).n, 0), 8, 'refused replays queued nothing');
});

test('workspaces apart: a key never lists, claims or replays another workspace\'s submissions (404); a single-form key stays on its form (403)', async () => {
  const a = await setup();
  const b = await setup();
  await submit(a.id, { secret: 'of a' });
  const sid = (await a.call('GET', `/form/${a.id}/submission`)).body.data[0].id as number;
  assert.equal((await b.call('GET', `/form/${a.id}/submission`)).status, 404);
  assert.equal((await b.call('POST', `/form/${a.id}/submission/${sid}/claim`, { form_id: a.id, submission_id: sid })).status, 404);
  assert.equal((await b.call('POST', `/form/${a.id}/replay`, { form_id: a.id, submission_ids: [sid] })).status, 404);
  assert.equal((await b.call('POST', `/form/${b.id}/submission/${sid}/claim`, { form_id: b.id, submission_id: sid })).status, 404, 'an id of another form');
  assert.equal((await b.call('GET', `/form/${a.id}/submission/${sid}/file/0`)).status, 404);

  const other = (await a.call('POST', '/form', { name: 'Other' })).body.id as string;
  const single = publicClient(d, addFormKey(d, { tenantId: a.tenantId, formId: a.id }).key);
  assert.equal((await single('GET', `/form/${a.id}/submission`)).status, 200);
  assert.equal((await single('GET', `/form/${other}/submission`)).status, 403);
  assert.equal((await single('POST', `/form/${a.id}/replay`, { form_id: other, submission_ids: [sid] })).status, 403, 'a body naming another form');

  const writer = publicClient(d, addFormKey(d, { tenantId: a.tenantId, scopes: ['forms:read', 'forms:write'] }).key);
  const noScope = await writer('GET', `/form/${a.id}/submission`);
  assert.equal(noScope.status, 403);
  assert.match(noScope.body.message, /lacks the scope submissions:read/);
  const reader = publicClient(d, addFormKey(d, { tenantId: a.tenantId, scopes: ['submissions:read'] }).key);
  assert.equal((await reader('POST', `/form/${a.id}/submission/${sid}/claim`, { form_id: a.id, submission_id: sid })).status, 403, 'claim needs forms:write');
  assert.equal((await publicClient(d, undefined)('GET', `/form/${a.id}/submission`)).status, 401);
});
