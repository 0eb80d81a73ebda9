import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// The public submission endpoint POST /f/{form_id} (docs/forms.md "Submitting"): body formats,
// answers for browsers and for JSON callers, origins and CORS, limits, abuse, the per-address
// rate limit, schema enforcement, plan limits, and visitor data.

let d: TestDaemon;
type Call = ReturnType<typeof publicClient>;
let workspaces = 0;
const workspace = (tenantId = `in${++workspaces}`): Call => publicClient(d, addFormKey(d, { tenantId }).key);

before(async () => {
  d = await startTestDaemon({
    forms: {
      tiers: {
        free: { forms: 50, actionsPerForm: 5, submissionsPerMonth: 1000, fileBytes: 0 },
        files: { forms: 50, actionsPerForm: 5, submissionsPerMonth: 1000, fileBytes: 200_000 },
        tiny: { forms: 5, actionsPerForm: 2, submissionsPerMonth: 2, fileBytes: 0 },
      },
      tenantTiers: { 'files-ws': 'files', 'tiny-ws': 'tiny', 'burst-ws': 'tiny' },
      rateLimits: { perIpPerMinute: 100_000 },
      deliveries: { enabled: false },
      intake: { maxFiles: 3, maxFileBytes: 50_000, maxBodyBytes: 64 * 1024, maxFields: 50 },
    },
  } as never);
});
after(async () => { await d?.stop(); });

/** Makes a form in the workspace and returns its id. */
async function form(call: Call, settings: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/form', { name: 'Contact', ...settings });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id as string;
}

/** Posts to the public endpoint without following redirects. */
function post(id: string, body: BodyInit | undefined, headers: Record<string, string> = {}) {
  return fetch(`${d.url}/f/${id}`, { method: 'POST', body, headers, redirect: 'manual' });
}
const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };
const json = { 'content-type': 'application/json', accept: 'application/json' };

/** The form's submissions (spam included), oldest first. */
async function stored(call: Call, id: string, query = 'getSpam=true&order=asc&limit=100') {
  const res = await call('GET', `/form/${id}/submission?${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { data: Record<string, any>[]; total: number };
}

test('a browser post (url-encoded) is stored and redirected (303) to the built-in thank-you page, which names the form', async () => {
  const call = workspace();
  const id = await form(call, { name: 'Support' });
  const res = await post(id, 'email=a%40example.com&message=hello+there&tags[]=x&tags[]=y', urlencoded);
  assert.equal(res.status, 303);
  const next = res.headers.get('location')!;
  assert.equal(next, `${d.url}/f/${id}/thanks`);
  const page = await fetch(next);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  assert.match(await page.text(), /Thank you[\s\S]*Support/);
  const list = await stored(call, id);
  assert.equal(list.total, 1);
  const s = list.data[0]!;
  assert.deepEqual(s.data, { email: 'a@example.com', message: 'hello there', tags: ['x', 'y'] });
  assert.deepEqual([s.spam, s.spam_reason, s.claimed, s.visitor, s.files], [false, null, false, null, []]);
  assert.equal(typeof s.id, 'number');
});

test('Accept: application/json gets {ok, next}; a JSON body is accepted; success_redirect paths resolve against the posting page', async () => {
  const call = workspace();
  const id = await form(call, { success_redirect: '/thanks' });
  const res = await post(id, JSON.stringify({ email: 'b@example.com', age: 42, agree: true, none: null, pets: ['cat', 'dog'] }), { ...json, origin: 'https://shop.example.com' });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { ok: true, next: 'https://shop.example.com/thanks' });
  const viaForm = await post(id, 'x=1', { ...urlencoded, referer: 'https://shop.example.com/contact?x=1' });
  assert.equal(viaForm.headers.get('location'), 'https://shop.example.com/thanks');
  const abs = await form(call, { success_redirect: 'https://example.org/done' });
  assert.equal((await post(abs, 'x=1', urlencoded)).headers.get('location'), 'https://example.org/done');
  const list = await stored(call, id);
  assert.deepEqual(list.data[0]!.data, { email: 'b@example.com', age: '42', agree: 'true', none: '', pets: ['cat', 'dog'] });
});

test('errors: 404 unknown form, 403 submissions disabled, in JSON {name, message} for JSON callers and as a page for browsers', async () => {
  const call = workspace();
  const r404 = await post('nope', 'a=1', { ...urlencoded, accept: 'application/json' });
  assert.equal(r404.status, 404);
  assert.deepEqual(await r404.json(), { name: 'not_found', message: 'form nope not found' });
  const page = await post('nope', 'a=1', urlencoded);
  assert.equal(page.status, 404);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  assert.match(await page.text(), /form nope not found/);
  const off = await form(call, { submissions_enabled: false });
  const r403 = await post(off, JSON.stringify({ a: 1 }), json);
  assert.equal(r403.status, 403);
  assert.deepEqual(await r403.json(), { name: 'forbidden', message: 'this form is not accepting submissions' });
  assert.equal((await stored(call, off)).total, 0);
});

test('allowed_domains: Origin, then Referer; CORS for allowed pages only, never with credentials; preflight', async () => {
  const call = workspace();
  const id = await form(call, { allowed_domains: ['example.com', '*.shop.example', 'https://app.example.net:8443'] });
  const ok = async (headers: Record<string, string>) => (await post(id, JSON.stringify({ a: 1 }), { ...json, ...headers })).status;
  assert.equal(await ok({ origin: 'https://example.com' }), 200);
  assert.equal(await ok({ origin: 'http://example.com:3000' }), 200, 'a host entry matches any scheme and port');
  assert.equal(await ok({ origin: 'https://a.b.shop.example' }), 200);
  assert.equal(await ok({ origin: 'https://shop.example' }), 403, '*.x matches subdomains only');
  assert.equal(await ok({ origin: 'https://app.example.net:8443' }), 200);
  assert.equal(await ok({ origin: 'https://app.example.net' }), 403, 'a URL entry matches its exact origin');
  assert.equal(await ok({ origin: 'https://evil.example.org' }), 403);
  assert.equal(await ok({ referer: 'https://example.com/page' }), 200, 'Referer when there is no Origin');
  assert.equal(await ok({ origin: 'null', referer: 'https://example.com/page' }), 200, 'an opaque origin falls back to Referer');
  assert.equal(await ok({ origin: 'https://evil.example.org', referer: 'https://example.com/' }), 403, 'Origin wins over Referer');
  assert.equal(await ok({}), 403, 'a restricted form needs an origin');

  const good = await post(id, JSON.stringify({ a: 1 }), { ...json, origin: 'https://example.com' });
  assert.equal(good.headers.get('access-control-allow-origin'), 'https://example.com');
  assert.match(good.headers.get('vary') ?? '', /Origin/);
  assert.equal(good.headers.get('access-control-allow-credentials'), null);
  const bad = await post(id, JSON.stringify({ a: 1 }), { ...json, origin: 'https://evil.example.org' });
  assert.equal(bad.headers.get('access-control-allow-origin'), null);
  assert.match((await bad.json()).message, /does not accept posts from https:\/\/evil\.example\.org/);

  const pre = await fetch(`${d.url}/f/${id}`, { method: 'OPTIONS', headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' } });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), 'https://example.com');
  assert.match(pre.headers.get('access-control-allow-methods')!, /POST/);
  assert.equal(pre.headers.get('access-control-allow-credentials'), null);
  const preBad = await fetch(`${d.url}/f/${id}`, { method: 'OPTIONS', headers: { origin: 'https://evil.example.org', 'access-control-request-method': 'POST' } });
  assert.equal(preBad.status, 403);
  assert.equal(preBad.headers.get('access-control-allow-origin'), null);

  const open = await form(call);
  assert.equal((await post(open, JSON.stringify({ a: 1 }), { ...json, origin: 'https://anywhere.example' })).headers.get('access-control-allow-origin'), '*');
  assert.equal((await stored(call, id)).total, 7, 'only the allowed posts were stored');
});

test('malformed and oversized bodies get 4xx {name, message} and store nothing', async () => {
  const call = workspace();
  const id = await form(call);
  const cases: [BodyInit, Record<string, string>, number, string][] = [
    ['{"a":', json, 400, 'validation_error'],
    ['[1,2]', json, 400, 'validation_error'],
    ['{"a":{"b":1}}', json, 400, 'validation_error'],
    ['', { ...json }, 400, 'validation_error'],
    ['a=1', { 'content-type': 'text/plain', accept: 'application/json' }, 415, 'unsupported_media_type'],
    ['<a/>', { 'content-type': 'application/xml', accept: 'application/json' }, 415, 'unsupported_media_type'],
    [`m=${'x'.repeat(10 * 1024 * 1024)}`, { ...urlencoded, accept: 'application/json' }, 413, 'payload_too_large'],
    [JSON.stringify({ m: 'x'.repeat(10 * 1024 * 1024) }), json, 413, 'payload_too_large'],
    [Array.from({ length: 60 }, (_, i) => `f${i}=1`).join('&'), { ...urlencoded, accept: 'application/json' }, 413, 'payload_too_large'],
    [`${'n'.repeat(201)}=1`, { ...urlencoded, accept: 'application/json' }, 400, 'validation_error'],
    ['--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n', { 'content-type': 'multipart/form-data; boundary=x', accept: 'application/json' }, 400, 'validation_error'],
  ];
  for (const [body, headers, status, name] of cases) {
    const res = await post(id, body, headers);
    const got = await res.json() as { name: string; message: string };
    assert.equal(res.status, status, `${headers['content-type']} ${String(body).slice(0, 30)}: ${got.message}`);
    assert.equal(got.name, name);
    assert.equal(typeof got.message, 'string');
  }
  assert.equal((await stored(call, id)).total, 0);
  assert.equal((await fetch(`${d.url}/api/v1/health`)).status, 200, 'the server is still answering');
});

test('multipart: files are stored with the submission and downloaded as attachments; limits refuse cleanly and leave no file behind', async () => {
  const call = publicClient(d, addFormKey(d, { tenantId: 'files-ws' }).key);
  const id = await form(call);
  const fd = new FormData();
  fd.append('name', 'Ada');
  fd.append('cv', new Blob(['hello file'], { type: 'text/plain' }), 'cv.txt');
  fd.append('photo', new Blob([new Uint8Array([137, 80, 78, 71, 0, 1, 2])], { type: 'image/png' }), '../../etc/photo.png');
  const res = await post(id, fd, { accept: 'application/json' });
  assert.equal(res.status, 200, await res.clone().text());
  const s = (await stored(call, id)).data[0]!;
  assert.deepEqual(s.data, { name: 'Ada' });
  assert.deepEqual(s.files, [
    { index: 0, field: 'cv', name: 'cv.txt', type: 'text/plain', size: 10 },
    { index: 1, field: 'photo', name: 'photo.png', type: 'image/png', size: 7 },
  ], 'a path in the file name is dropped');
  const key = addFormKey(d, { tenantId: 'files-ws' }).key;
  const dl = await fetch(`${d.url}/public/v1/form/${id}/submission/${s.id}/file/1`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(dl.status, 200);
  assert.equal(dl.headers.get('content-type'), 'application/octet-stream');
  assert.equal(dl.headers.get('x-content-type-options'), 'nosniff');
  assert.match(dl.headers.get('content-disposition')!, /^attachment; filename="photo\.png"/);
  assert.deepEqual([...new Uint8Array(await dl.arrayBuffer())], [137, 80, 78, 71, 0, 1, 2]);
  assert.equal((await call('GET', `/form/${id}/submission/${s.id}/file/2`)).status, 404);

  const filesDir = join(d.dir, 'form-files', id);
  const before = readdirSync(filesDir).length;
  assert.equal(before, 2);
  const many = new FormData();
  for (let i = 0; i < 100; i++) many.append(`f${i}`, new Blob(['x']), `f${i}.txt`);
  const r100 = await post(id, many, { accept: 'application/json' });
  assert.equal(r100.status, 413);
  assert.equal(readdirSync(filesDir).length, before, 'the 100-file post left no file');
  assert.deepEqual(await r100.json(), { name: 'payload_too_large', message: 'too many files: at most 3 per submission' });
  const big = new FormData();
  big.append('a', 'b');
  big.append('f', new Blob([new Uint8Array(60_000)]), 'big.bin');
  const rBig = await post(id, big, { accept: 'application/json' });
  assert.equal(rBig.status, 413);
  assert.match((await rBig.json()).message, /larger than 50000 bytes/);
  assert.equal((await stored(call, id)).total, 1);
  assert.equal(readdirSync(filesDir).length, before, 'refused posts left no file');

  const free = workspace();
  const freeForm = await form(free);
  const up = new FormData();
  up.append('f', new Blob(['x']), 'x.txt');
  const r403 = await post(freeForm, up, { accept: 'application/json' });
  assert.equal(r403.status, 403);
  assert.deepEqual(await r403.json(), { name: 'forbidden', message: 'plan free does not include file uploads' });
});

test('schema: enforce true refuses a non-matching submission with 422 naming each field; enforce false only documents', async () => {
  const call = workspace();
  const id = await form(call);
  const fields = [
    { name: 'email', type: 'email', required: true },
    { name: 'age', type: 'number', required: false },
    { name: 'size', type: 'select', required: false, options: ['S', 'M'] },
    { name: 'note', type: 'text', required: false, maxLength: 5 },
  ];
  assert.equal((await call('PUT', `/form/${id}/schema`, { form_id: id, fields, enforce: true })).status, 200);
  const bad = await post(id, JSON.stringify({ email: 'nope', age: 'old', size: 'XL', note: 'too long' }), json);
  assert.equal(bad.status, 422);
  const body = await bad.json();
  assert.equal(body.name, 'schema_mismatch');
  assert.deepEqual(body.errors, [
    { field: 'email', message: 'must be an e-mail address' },
    { field: 'age', message: 'must be a number' },
    { field: 'size', message: '"XL" is not one of the options (S, M)' },
    { field: 'note', message: 'must be at most 5 characters' },
  ]);
  assert.match(body.message, /^the submission does not match the form's schema: email: must be an e-mail address; age: must be a number/);
  const missing = await post(id, JSON.stringify({ age: 3 }), json);
  assert.deepEqual((await missing.json()).errors, [{ field: 'email', message: 'is required' }]);
  assert.equal((await post(id, JSON.stringify({ email: 'a@example.com', age: '3', size: 'M', extra: 'kept' }), json)).status, 200);
  assert.equal((await call('PUT', `/form/${id}/schema`, { form_id: id, fields, enforce: false })).status, 200);
  assert.equal((await post(id, JSON.stringify({ email: 'nope' }), json)).status, 200);
  assert.equal((await stored(call, id)).total, 2);
  const f = await call('GET', `/form/${id}/fields`);
  assert.deepEqual(f.body, { form_id: id, fields: ['age', 'email', 'extra', 'size'], source: 'submissions' });
});

test('plan: the monthly submissions limit answers 403; spam is stored but not counted; /plan reports the usage', async () => {
  const call = publicClient(d, addFormKey(d, { tenantId: 'tiny-ws' }).key);
  const id = await form(call);
  assert.equal((await post(id, JSON.stringify({ a: 1 }), json)).status, 200);
  assert.equal((await post(id, JSON.stringify({ a: 2, fc_honeypot: 'bot' }), json)).status, 200, 'spam');
  assert.equal((await post(id, JSON.stringify({ a: 3 }), json)).status, 200);
  const over = await post(id, JSON.stringify({ a: 4 }), json);
  assert.equal(over.status, 403);
  assert.deepEqual(await over.json(), { name: 'forbidden', message: 'plan tiny allows 2 submissions per month' });
  assert.equal((await call('GET', '/plan')).body.usage.submissions_this_month, 2);
  assert.equal((await stored(call, id)).total, 3);
});

test('plan: posts arriving together (one group commit) never pass the monthly limit', async () => {
  const call = publicClient(d, addFormKey(d, { tenantId: 'burst-ws' }).key);
  const id = await form(call);
  const statuses = await Promise.all(Array.from({ length: 8 }, (_, i) => post(id, JSON.stringify({ n: i }), json).then(async (r) => { await r.arrayBuffer(); return r.status; })));
  assert.deepEqual(statuses.sort(), [200, 200, 403, 403, 403, 403, 403, 403]);
  assert.equal((await stored(call, id)).total, 2);
});

test('visitor IP and browser are stored only with collect_visitor_info', async () => {
  const call = workspace();
  const off = await form(call);
  const on = await form(call, { collect_visitor_info: true });
  for (const id of [off, on]) assert.equal((await post(id, JSON.stringify({ a: 1 }), { ...json, 'user-agent': 'TestBrowser/1.0' })).status, 200);
  assert.equal((await stored(call, off)).data[0]!.visitor, null);
  assert.deepEqual((await stored(call, on)).data[0]!.visitor, { ip: '127.0.0.1', user_agent: 'TestBrowser/1.0' });
});

test('per-address rate limit: 1,000 posts from one address hit 429 with Retry-After; the server keeps answering', async () => {
  const small = await startTestDaemon({ forms: { rateLimits: { perIpPerMinute: 20 } } } as never);
  try {
    const call = publicClient(small, addFormKey(small).key);
    const res = await call('POST', '/form', { name: 'Busy' });
    const id = res.body.id as string;
    const statuses = new Map<number, number>();
    let retryAfter: string | null = null;
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, (_, j) => fetch(`${small.url}/f/${id}`, {
        method: 'POST', headers: json, body: JSON.stringify({ n: i + j }),
      })));
      for (const r of batch) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 429) {
          retryAfter = r.headers.get('retry-after');
          assert.equal((await r.json()).name, 'rate_limited');
        } else await r.arrayBuffer();
      }
    }
    assert.deepEqual([...statuses.entries()].sort(), [[200, 20], [429, 980]]);
    assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `Retry-After ${retryAfter}`);
    assert.equal((await call('GET', `/form/${id}/submission`)).body.total, 20);
    assert.equal((await call('GET', '/plan')).status, 200, 'the API still answers');
  } finally {
    await small.stop();
  }
});

test('api.trustedProxies: X-Forwarded-For names the visitor only behind a trusted proxy', async () => {
  const proxied = await startTestDaemon({ api: { trustedProxies: ['127.0.0.1/32'] } } as never);
  try {
    const call = publicClient(proxied, addFormKey(proxied).key);
    const id = (await call('POST', '/form', { name: 'P', collect_visitor_info: true, blocked_ips: ['198.51.100.0/24'] })).body.id as string;
    await fetch(`${proxied.url}/f/${id}`, { method: 'POST', headers: { ...json, 'x-forwarded-for': '203.0.113.9' }, body: '{"a":1}' });
    await fetch(`${proxied.url}/f/${id}`, { method: 'POST', headers: { ...json, 'x-forwarded-for': '198.51.100.7' }, body: '{"a":2}' });
    const list = (await call('GET', `/form/${id}/submission?getSpam=true&order=asc`)).body.data;
    assert.equal(list[0].visitor.ip, '203.0.113.9');
    assert.deepEqual([list[1].spam, list[1].spam_reason], [true, 'address 198.51.100.7 is blocked (198.51.100.0/24)']);
  } finally {
    await proxied.stop();
  }
  const call = workspace();
  const id = await form(call, { collect_visitor_info: true });
  await post(id, '{"a":1}', { ...json, 'x-forwarded-for': '203.0.113.9' });
  assert.equal((await stored(call, id)).data[0]!.visitor.ip, '127.0.0.1', 'untrusted: the header is ignored');
});

test('deleting a form deletes its submissions, queued deliveries and files', async () => {
  const call = publicClient(d, addFormKey(d, { tenantId: 'files-ws' }).key);
  const id = await form(call, { name: 'Gone' });
  await call('POST', `/form/${id}/action`, { form_id: id, type: 'webhook', config: { url: 'https://example.com/hook' } });
  const fd = new FormData();
  fd.append('f', new Blob(['x']), 'x.txt');
  assert.equal((await post(id, fd, { accept: 'application/json' })).status, 200);
  assert.equal((await post(id, '{"a":1}', json)).status, 200);
  assert.ok(existsSync(join(d.dir, 'form-files', id)));
  const del = await call('DELETE', `/form/${id}`, { form_id: id, confirm_name: 'Gone' });
  assert.deepEqual(del.body, { deleted: true, form_id: id, actions_deleted: 1, submissions_deleted: 2 });
  assert.equal(existsSync(join(d.dir, 'form-files', id)), false);
  const left = d.core.db.prepare('SELECT (SELECT COUNT(*) FROM form_submissions WHERE form_id = ?) AS s, (SELECT COUNT(*) FROM form_deliveries WHERE form_id = ?) AS q').get(id, id);
  assert.deepEqual(left, { s: 0, q: 0 });
  assert.equal((await post(id, '{"a":1}', json)).status, 404);
});
