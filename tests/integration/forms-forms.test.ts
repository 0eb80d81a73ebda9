import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { loadManifests } from '../../gitops/load/index.js';
import { validateManifests } from '../../gitops/validate/validate.js';
import '../../runtime/kinds-all.js';
import { planChanges } from '../../core/plan/plan.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import type { FormActionRow } from '../../runtime/forms/forms/rows.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// Forms over /public/v1 (forms-api.md §2, §4; docs/forms.md): every form route, the change
// semantics, validation, plan limits, workspaces apart, and git-owned forms read-only.

let d: TestDaemon;
type Call = ReturnType<typeof publicClient>;
/** a client of a fresh workspace (tenant), so each test counts its own forms against the plan */
let workspaces = 0;
const workspace = (tenantId = `ws${++workspaces}`): Call => publicClient(d, addFormKey(d, { tenantId }).key);

before(async () => {
  d = await startTestDaemon({ forms: { tenantTiers: { 'pro-ws': 'pro' }, recaptcha: { secret: 'test-recaptcha-secret' } } } as never);
});
after(async () => { await d?.stop(); });

const DEFAULTS = {
  description: '', group: '', allowed_domains: [], success_redirect: '', honeypot_field: 'fc_honeypot', recaptcha_min_score: null,
  submissions_enabled: true, collect_visitor_info: false, max_links: 0, block_disposable_emails: false, max_per_email_per_hour: 0, blocked_ips: [],
  reminder_after_minutes: 0,
};

test('POST /form: 201 with the defaults of §2; GET /form/{id} reads it back', async () => {
  const call = workspace();
  const res = await call('POST', '/form', { name: 'Contact' });
  assert.equal(res.status, 201);
  const { id, created_at, updated_at, ...rest } = res.body;
  assert.equal(typeof id, 'string');
  assert.match(created_at, /^\d{4}-\d\d-\d\dT/);
  assert.equal(updated_at, created_at);
  assert.deepEqual(rest, { name: 'Contact', ...DEFAULTS, schema: { fields: [], enforce: false }, origin: 'api', source: null });
  assert.deepEqual((await call('GET', `/form/${id}`)).body, res.body);
  const nulls = await call('POST', '/form', { name: 'Nulls', allowed_domains: null, submissions_enabled: null, max_links: null, blocked_ips: null, recaptcha_min_score: null });
  assert.equal(nulls.status, 201);
  assert.deepEqual({ ...nulls.body, id: 0, created_at: 0, updated_at: 0 }, { ...res.body, name: 'Nulls', id: 0, created_at: 0, updated_at: 0 }, 'null takes the default on create');
});

test('POST /form: every setting stored as sent; 400 validation_error naming the field for each broken rule', async () => {
  const call = workspace();
  const all = {
    name: 'Signup', description: 'Newsletter', group: 'marketing', allowed_domains: ['example.com', 'https://shop.example.com'], success_redirect: '/thanks',
    honeypot_field: 'trap', submissions_enabled: false, collect_visitor_info: true, max_links: 2, block_disposable_emails: true, max_per_email_per_hour: 5,
    blocked_ips: ['192.0.2.1', '198.51.100.0/24'],
  };
  const res = await call('POST', '/form', all);
  assert.equal(res.status, 201);
  for (const [k, v] of Object.entries(all)) assert.deepEqual(res.body[k], v, k);
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ success_redirect: 'thanks' }, /^success_redirect: must be an http or https URL or a path starting with \/$/],
    [{ success_redirect: 'ftp://example.com' }, /^success_redirect:/],
    [{ recaptcha_min_score: 1.5 }, /^recaptcha_min_score: must be <= 1$/],
    [{ blocked_ips: ['192.0.2.1', 'nope'] }, /^blocked_ips\[1\]: "nope" is neither an IP address nor a CIDR range$/],
    [{ allowed_domains: ['a b'] }, /^allowed_domains\[0\]:/],
    [{ max_per_email_per_hour: 1.5 }, /^max_per_email_per_hour: must be of type integer,null$/],
    [{ name: '' }, /^name: must NOT have fewer than 1 characters$/],
    [{ name: 'a\u202Eb' }, /^name: must be printable text/],
  ];
  for (const [body, msg] of bad) {
    const r = await call('POST', '/form', { name: 'x', ...body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.name, 'validation_error');
    assert.match(r.body.message, msg);
  }
  assert.equal((await call('GET', '/form')).body.total, 1, 'nothing was created by a refused request');
});

test('PATCH /form/{id}: only sent fields change; null leaves; recaptcha null switches off; empty strings reset; lists replace', async () => {
  const call = workspace('pro-ws');
  const created = (await call('POST', '/form', {
    name: 'Contact', description: 'd', group: 'sales', success_redirect: 'https://example.com/thanks', honeypot_field: 'trap',
    recaptcha_min_score: 0.5, max_links: 3, blocked_ips: ['192.0.2.1', '192.0.2.2'], allowed_domains: ['example.com'],
  })).body;
  const id = created.id as string;
  const patch = async (body: Record<string, unknown>) => {
    const r = await call('PATCH', `/form/${id}`, { form_id: id, ...body });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  let f = await patch({ description: 'new' });
  assert.deepEqual({ ...f, updated_at: 0 }, { ...created, description: 'new', updated_at: 0 });
  f = await patch({ name: null, submissions_enabled: null, max_links: null, blocked_ips: null, allowed_domains: null, collect_visitor_info: null });
  assert.deepEqual([f.name, f.submissions_enabled, f.max_links, f.blocked_ips, f.allowed_domains], ['Contact', true, 3, ['192.0.2.1', '192.0.2.2'], ['example.com']]);
  assert.equal(f.recaptcha_min_score, 0.5, 'absent leaves the score');
  f = await patch({ recaptcha_min_score: null });
  assert.equal(f.recaptcha_min_score, null, 'null switches the CAPTCHA check off');
  f = await patch({ success_redirect: '', group: '', honeypot_field: '' });
  assert.deepEqual([f.success_redirect, f.group, f.honeypot_field], ['', '', 'fc_honeypot']);
  f = await patch({ blocked_ips: ['203.0.113.0/24'], allowed_domains: [] });
  assert.deepEqual([f.blocked_ips, f.allowed_domains], [['203.0.113.0/24'], []]);
  f = await patch({ max_links: 0, submissions_enabled: false, recaptcha_min_score: 0.7 });
  assert.deepEqual([f.max_links, f.submissions_enabled, f.recaptcha_min_score], [0, false, 0.7]);
  assert.deepEqual((await call('GET', `/form/${id}`)).body, f);
  const refused = await call('PATCH', `/form/${id}`, { form_id: id, success_redirect: 'nope', description: 'not stored' });
  assert.equal(refused.status, 400);
  assert.match(refused.body.message, /^success_redirect:/);
  assert.equal((await call('GET', `/form/${id}`)).body.description, 'new', 'a refused change changes nothing');
});

test('PATCH /form/{id}: form_id is required; the path id wins over the body id', async () => {
  const call = workspace();
  const a = (await call('POST', '/form', { name: 'A' })).body.id as string;
  const b = (await call('POST', '/form', { name: 'B' })).body.id as string;
  const missing = await call('PATCH', `/form/${a}`, { name: 'A2' });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.message, 'form_id is required');
  const r = await call('PATCH', `/form/${a}`, { form_id: b, name: 'A2' });
  assert.equal(r.status, 200);
  assert.equal(r.body.id, a);
  assert.deepEqual([(await call('GET', `/form/${a}`)).body.name, (await call('GET', `/form/${b}`)).body.name], ['A2', 'B']);
});

test('GET /form: pages of 20 by default, limit and page, sort by created_at (default desc), updated_at or name', async () => {
  const call = workspace('pro-ws');
  const ids: string[] = [];
  for (const name of ['bravo', 'Alpha', 'charlie']) ids.push((await call('POST', '/form', { name })).body.id as string);
  await call('PATCH', `/form/${ids[0]!}`, { form_id: ids[0], description: 'touched last' });
  const names = async (q: string) => {
    const r = await call('GET', `/form${q}`);
    assert.equal(r.status, 200);
    return r.body;
  };
  const all = await names('');
  assert.deepEqual([all.page, all.limit], [1, 20]);
  const mine = all.data.filter((f: { id: string }) => ids.includes(f.id)).map((f: { name: string }) => f.name);
  assert.deepEqual(mine, ['charlie', 'Alpha', 'bravo'], 'newest first');
  const asc = (await names('?order=asc&limit=100')).data.map((f: { name: string }) => f.name).filter((n: string) => ['bravo', 'Alpha', 'charlie'].includes(n));
  assert.deepEqual(asc, ['bravo', 'Alpha', 'charlie']);
  const updated = (await names('?sort=updated_at&limit=1')).data;
  assert.equal(updated[0].name, 'bravo', 'the last one changed');
  const byName = await names('?sort=name&order=asc&limit=2&page=1');
  const total = byName.total as number;
  assert.ok(total >= 3);
  assert.equal(byName.data.length, 2);
  const past = await names(`?page=${total + 1}&limit=1`);
  assert.deepEqual([past.data, past.page, past.limit, past.total], [[], total + 1, 1, total]);
});

test('DELETE /form/{id}: needs form_id and the exact name; deletes the actions too', async () => {
  const call = workspace();
  const id = (await call('POST', '/form', { name: 'Contact Us' })).body.id as string;
  assert.equal((await call('POST', `/form/${id}/action`, { form_id: id, type: 'slack', config: { webhook_url: 'https://hooks.slack.com/services/T/B/X' } })).status, 201);
  const noName = await call('DELETE', `/form/${id}`, { form_id: id });
  assert.deepEqual([noName.status, noName.body.message], [400, 'confirm_name is required']);
  const wrong = await call('DELETE', `/form/${id}`, { form_id: id, confirm_name: 'contact us' });
  assert.deepEqual([wrong.status, wrong.body.name, wrong.body.message], [400, 'validation_error', 'confirm_name: must equal the form\'s exact name "Contact Us"']);
  const ok = await call('DELETE', `/form/${id}`, { form_id: id, confirm_name: 'Contact Us' });
  assert.deepEqual([ok.status, ok.body], [200, { deleted: true, form_id: id, actions_deleted: 1, submissions_deleted: 0 }]);
  assert.equal((await call('GET', `/form/${id}`)).status, 404);
  assert.equal([...rowsOf<FormActionRow>(d.core.holder.current, 'formaction').values()].filter((r) => r.formId === id).length, 0);
});

test('POST /form/{id}/duplicate: 201, "Copy of <name>" or the given name, settings, schema and actions copied', async () => {
  const call = workspace();
  const src = (await call('POST', '/form', { name: 'Contact', group: 'web', blocked_ips: ['192.0.2.1'] })).body;
  await call('PUT', `/form/${src.id}/schema`, { form_id: src.id, fields: [{ name: 'email', type: 'email', required: true }], enforce: true });
  await call('POST', `/form/${src.id}/action`, { form_id: src.id, type: 'webhook', config: { url: 'https://example.com/hook', secret: 's3cret' }, conditions: [{ field: 'plan', op: 'equals', value: 'pro' }] });
  const copy = await call('POST', `/form/${src.id}/duplicate`, { form_id: src.id });
  assert.equal(copy.status, 201);
  assert.notEqual(copy.body.id, src.id);
  assert.equal(copy.body.name, 'Copy of Contact');
  assert.deepEqual([copy.body.group, copy.body.blocked_ips, copy.body.schema], ['web', ['192.0.2.1'], { fields: [{ name: 'email', type: 'email', required: true }], enforce: true }]);
  const actions = (await call('GET', `/form/${copy.body.id}/action`)).body.data;
  assert.equal(actions.length, 1);
  assert.deepEqual([actions[0].type, actions[0].form_id, actions[0].conditions], ['webhook', copy.body.id, [{ field: 'plan', op: 'equals', value: 'pro' }]]);
  const stored = [...rowsOf<FormActionRow>(d.core.holder.current, 'formaction').values()].find((r) => r.id === actions[0].id)!;
  assert.deepEqual(stored.config, { url: 'https://example.com/hook', secret: 's3cret' }, 'the secret is copied, not its mask');
  const named = await call('POST', `/form/${src.id}/duplicate`, { form_id: src.id, name: 'Second' });
  assert.deepEqual([named.status, named.body.name], [201, 'Second']);
  assert.equal((await call('GET', `/form/${src.id}/action`)).body.total, 1, 'the source keeps its own action');
});

test('PUT /form/{id}/schema, GET /form/{id}/fields: entries exactly §2, enforce default false, an empty list clears', async () => {
  const call = workspace();
  const id = (await call('POST', '/form', { name: 'Contact' })).body.id as string;
  const fields = [
    { name: 'email', type: 'email', required: true, label: 'E-mail', maxLength: 200 },
    { name: 'topic', type: 'select', required: false, options: ['sales', 'support'] },
  ];
  const put = await call('PUT', `/form/${id}/schema`, { form_id: id, fields });
  assert.equal(put.status, 200);
  assert.deepEqual(put.body.schema, { fields, enforce: false });
  assert.deepEqual((await call('GET', `/form/${id}/fields`)).body, { form_id: id, fields: ['email', 'topic'], source: 'schema' });
  assert.equal((await call('PUT', `/form/${id}/schema`, { form_id: id, fields, enforce: true })).body.schema.enforce, true);
  const extra = await call('PUT', `/form/${id}/schema`, { form_id: id, fields: [{ name: 'a', type: 'text', required: true, placeholder: 'x' }] });
  assert.deepEqual([extra.status, extra.body.message], [400, 'unknown field "placeholder"']);
  const noRequired = await call('PUT', `/form/${id}/schema`, { form_id: id, fields: [{ name: 'a', type: 'text' }] });
  assert.deepEqual([noRequired.status, noRequired.body.message], [400, 'required is required']);
  const twice = await call('PUT', `/form/${id}/schema`, { form_id: id, fields: [fields[0], fields[0]] });
  assert.deepEqual([twice.status, twice.body.message], [400, 'fields[1].name: "email" is already the name of fields[0]']);
  assert.deepEqual([(await call('PUT', `/form/${id}/schema`, { form_id: id })).status], [400]);
  const cleared = await call('PUT', `/form/${id}/schema`, { form_id: id, fields: [], enforce: true });
  assert.deepEqual(cleared.body.schema, { fields: [], enforce: false });
  assert.deepEqual((await call('GET', `/form/${id}/fields`)).body.fields, []);
});

test('GET /form/{id}/snippets: the endpoint from api.publicURL, else the request origin; the honeypot hidden', async () => {
  const call = workspace();
  const id = (await call('POST', '/form', { name: 'Contact', honeypot_field: 'hp_field' })).body.id as string;
  const local = (await call('GET', `/form/${id}/snippets`)).body;
  assert.equal(local.endpoint, `${d.url}/f/${id}`);
  assert.match(local.html, /<input type="text" name="hp_field" style="position:absolute;left:-9999px" tabindex="-1" autocomplete="off" aria-hidden="true">/);
  assert.ok(local.fetch.includes(`fetch(${JSON.stringify(local.endpoint)}`));
  d.core.config.api.publicURL = 'https://forms.example.com/';
  try {
    const pub = (await call('GET', `/form/${id}/snippets`)).body;
    assert.equal(pub.endpoint, `https://forms.example.com/f/${id}`);
    assert.ok(pub.html.startsWith(`<form action="https://forms.example.com/f/${id}" method="POST">`));
  } finally {
    delete d.core.config.api.publicURL;
  }
});

test('two workspaces never see each other\'s forms: lists, reads, writes and usage', async () => {
  const a = workspace();
  const b = workspace();
  const id = (await a('POST', '/form', { name: 'Private' })).body.id as string;
  assert.equal((await b('GET', '/form')).body.total, 0);
  for (const [method, path, body] of [
    ['GET', `/form/${id}`, undefined], ['PATCH', `/form/${id}`, { form_id: id, name: 'x' }], ['DELETE', `/form/${id}`, { form_id: id, confirm_name: 'Private' }],
    ['POST', `/form/${id}/duplicate`, { form_id: id }], ['PUT', `/form/${id}/schema`, { form_id: id, fields: [] }], ['GET', `/form/${id}/fields`, undefined],
    ['GET', `/form/${id}/snippets`, undefined], ['GET', `/form/${id}/action`, undefined], ['POST', `/form/${id}/action`, { form_id: id, type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' } }],
  ] as const) {
    const r = await b(method, path, body);
    assert.deepEqual([r.status, r.body.name, r.body.message], [404, 'not_found', `form ${id} not found`], `${method} ${path}`);
  }
  assert.equal((await b('GET', '/plan')).body.usage.forms, 0);
  assert.equal((await a('GET', '/plan')).body.usage.forms, 1);
  assert.equal((await a('GET', `/form/${id}`)).body.name, 'Private');
});

test('plan limits: 403 past the plan\'s forms (create and duplicate); recaptcha_min_score needs a plan with recaptcha', async () => {
  const call = workspace();
  let last = '';
  for (let i = 0; i < 5; i++) last = (await call('POST', '/form', { name: `F${i}` })).body.id as string;
  for (const r of [await call('POST', '/form', { name: 'F6' }), await call('POST', `/form/${last}/duplicate`, { form_id: last })]) {
    assert.deepEqual([r.status, r.body], [403, { name: 'forbidden', message: 'plan free allows 5 forms' }]);
  }
  const free = workspace();
  const r = await free('POST', '/form', { name: 'Captcha', recaptcha_min_score: 0.5 });
  assert.deepEqual([r.status, r.body.message], [403, 'plan free does not include recaptcha (needed by recaptcha_min_score)']);
  const id = (await free('POST', '/form', { name: 'Plain' })).body.id as string;
  assert.equal((await free('PATCH', `/form/${id}`, { form_id: id, recaptcha_min_score: 0.2 })).status, 403);
  assert.equal((await free('PATCH', `/form/${id}`, { form_id: id, recaptcha_min_score: null })).status, 200, 'switching it off needs no feature');
  assert.equal((await workspace('pro-ws')('POST', '/form', { name: 'Captcha', recaptcha_min_score: 0.5 })).status, 201);
});

test('a form declared in git (kind Form) is read-only over /public/v1: 409 conflict naming its file; reads and copies work', async () => {
  const call = workspace('gitws');
  const manifest = [
    'apiVersion: gslb/v1', 'kind: Form', 'metadata: {name: contact}',
    'spec: {name: From git, actions: [{type: slack, config: {webhook_url: "https://hooks.slack.com/services/T/B/X"}}]}', '',
  ].join('\n');
  const v = validateManifests(loadManifests([{ path: 'forms/contact.yaml', text: manifest }]).manifests);
  assert.deepEqual(v.problems, []);
  d.core.apply(planChanges({ desired: v.desired, actual: d.core.holder.current, revision: 'b'.repeat(40), newId: () => d.core.newId(), tenantId: 'gitws' }));
  const list = (await call('GET', '/form')).body.data;
  assert.equal(list.length, 1);
  const id = list[0].id as string;
  const got = await call('GET', `/form/${id}`);
  assert.deepEqual([got.status, got.body.name, got.body.origin, got.body.source, got.body.created_at], [200, 'From git', 'git', 'forms/contact.yaml', null]);
  const actions = (await call('GET', `/form/${id}/action`)).body.data;
  assert.deepEqual(actions.map((a: { type: string; origin: string; config: unknown }) => [a.type, a.origin, a.config]), [['slack', 'git', { webhook_url: '********' }]]);
  const want = 'form "From git" is managed by git (declared in forms/contact.yaml at commit bbbbbbbbbbbb)';
  for (const [method, path, body] of [
    ['PATCH', `/form/${id}`, { form_id: id, name: 'x' }], ['DELETE', `/form/${id}`, { form_id: id, confirm_name: 'From git' }],
    ['PUT', `/form/${id}/schema`, { form_id: id, fields: [] }], ['POST', `/form/${id}/action`, { form_id: id, type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' } }],
  ] as const) {
    const r = await call(method, path, body);
    assert.equal(r.status, 409, `${method} ${path}`);
    assert.equal(r.body.name, 'conflict');
    assert.ok(r.body.message.startsWith(want), r.body.message);
  }
  const copy = await call('POST', `/form/${id}/duplicate`, { form_id: id });
  assert.deepEqual([copy.status, copy.body.origin, copy.body.name], [201, 'api', 'Copy of From git']);
  const copied = (await call('GET', `/form/${copy.body.id}/action`)).body.data;
  assert.deepEqual(copied.map((a: { origin: string }) => a.origin), ['api'], 'the copy and its actions belong to the API');
});
