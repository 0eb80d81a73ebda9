import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// docs/api.md "Errors", docs/security.md "Input": every answer of the API is `{error}` on /api/v1
// and `{name, message}` on /public/v1, the framework's own errors included: path parameters the
// router would not match, methods a path does not take (405 with Allow), prototype-poisoning JSON
// keys, and a multipart part without a name on a form's public address.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
let d: TestDaemon;
let formKey = '';
let formId = '';

before(async () => {
  d = await startTestDaemon({ forms: { deliveries: { enabled: false } } } as never, { GSLB_API_KEY: SYS });
  formKey = addFormKey(d).key;
  const made = await publicClient(d, formKey)('POST', '/form', { name: 'Contact' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  formId = made.body.id as string;
});
after(async () => { await d?.stop(); });

/** One raw request (any method, fetch refuses TRACE); the body parsed as JSON when it is. */
function raw(method: string, path: string, opts: { headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: any; text: string; headers: Record<string, unknown> }> {
  const url = new URL(`${d.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method, headers: opts.headers ?? {} }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => {
        let body: unknown;
        try { body = JSON.parse(text); } catch { body = undefined; }
        resolve({ status: res.statusCode ?? 0, body, text, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}
const isApiError = (body: unknown) => typeof body === 'object' && body !== null && Object.keys(body).join() === 'error' && typeof (body as { error: unknown }).error === 'string';
const isPublicError = (body: unknown) => typeof body === 'object' && body !== null && Object.keys(body).sort().join() === 'message,name';

test('ids up to 200 characters reach authentication and the handler; longer ones are a 400 in the API\'s shape, never fastify\'s 414', async () => {
  const bearer = { authorization: `Bearer ${formKey}` };
  const rows: { name: string; path: string; headers?: Record<string, string>; status: number; shape: (b: unknown) => boolean; message?: RegExp }[] = [
    { name: '150 characters, no credentials', path: `/api/v1/pools/${'a'.repeat(150)}`, status: 401, shape: isApiError },
    { name: '150 characters, system key', path: `/api/v1/pools/${'a'.repeat(150)}`, headers: sys, status: 404, shape: isApiError },
    { name: '200 characters, system key', path: `/api/v1/pools/${'a'.repeat(200)}`, headers: sys, status: 404, shape: isApiError },
    { name: '201 characters', path: `/api/v1/pools/${'a'.repeat(201)}`, headers: sys, status: 400, shape: isApiError, message: /path parameter is longer than 200 characters/ },
    { name: '1,000 characters, no credentials', path: `/api/v1/members/${'a'.repeat(1000)}/status`, status: 400, shape: isApiError },
    { name: '/public/v1, 150 characters', path: `/public/v1/form/${'a'.repeat(150)}`, headers: bearer, status: 404, shape: isPublicError },
    { name: '/public/v1, 201 characters', path: `/public/v1/form/${'a'.repeat(201)}`, headers: bearer, status: 400, shape: isPublicError, message: /path parameter is longer than 200 characters/ },
  ];
  for (const r of rows) {
    const res = await raw('GET', r.path, { headers: r.headers ?? {} });
    assert.equal(res.status, r.status, `${r.name}: ${res.text}`);
    assert.ok(r.shape(res.body), `${r.name}: ${res.text}`);
    assert.ok(!res.text.includes('FST_'), `${r.name}: ${res.text}`);
    if (r.message) assert.match(res.body.error ?? res.body.message, r.message, r.name);
  }
  const pub = await raw('GET', `/public/v1/form/${'a'.repeat(201)}`, { headers: bearer });
  assert.equal(pub.body.name, 'validation_error');
});

test('a method the path does not take is 405 with Allow, in the API\'s shape; an unknown path stays 404', async () => {
  const rows: { method: string; path: string; allow: string; shape: (b: unknown) => boolean }[] = [
    { method: 'TRACE', path: '/api/v1/pools', allow: 'GET, HEAD, POST', shape: isApiError },
    { method: 'PATCH', path: '/api/v1/pools', allow: 'GET, HEAD, POST', shape: isApiError },
    { method: 'POST', path: '/api/v1/pools/abc', allow: 'DELETE, GET, HEAD, PUT', shape: isApiError },
    { method: 'PUT', path: '/public/v1/form', allow: 'GET, HEAD, POST', shape: isPublicError },
  ];
  for (const r of rows) {
    const res = await raw(r.method, r.path, { headers: sys });
    assert.equal(res.status, 405, `${r.method} ${r.path}: ${res.text}`);
    assert.equal(res.headers.allow, r.allow, `${r.method} ${r.path}`);
    assert.ok(r.shape(res.body), `${r.method} ${r.path}: ${res.text}`);
    const message = (res.body.error ?? res.body.message) as string;
    assert.equal(message, `method ${r.method} is not allowed on ${r.path}; allowed: ${r.allow}`);
  }
  const pub = await raw('PUT', '/public/v1/form');
  assert.equal(pub.body.name, 'method_not_allowed');
  const unknown = await raw('TRACE', '/api/v1/no-such-thing', { headers: sys });
  assert.deepEqual([unknown.status, unknown.body], [404, { error: 'no route for TRACE /api/v1/no-such-thing' }]);
  const unknownPublic = await raw('GET', '/public/v1/no-such-thing');
  assert.deepEqual([unknownPublic.status, unknownPublic.body.name], [404, 'not_found']);
});

test('a JSON body with a prototype-poisoning key is refused by name, not called malformed', async () => {
  const rows: { path: string; headers: Record<string, string>; body: string; want: string; read: (b: any) => string }[] = [
    { path: '/api/v1/pools', headers: sys, body: '{"name":"x","__proto__":{"polluted":1}}', want: 'the JSON body has a "__proto__" key, which is refused', read: (b) => b.error },
    { path: '/api/v1/pools', headers: sys, body: '{"name":"x","nested":[{"\\u005f_proto__":{}}]}', want: 'the JSON body has a "__proto__" key, which is refused', read: (b) => b.error },
    { path: '/api/v1/pools', headers: sys, body: '{"name":"x","constructor":{"prototype":{"polluted":1}}}', want: 'the JSON body has a "constructor" with a "prototype" key, which is refused', read: (b) => b.error },
    { path: '/public/v1/form', headers: { authorization: `Bearer ${formKey}` }, body: '{"name":"x","__proto__":{}}', want: 'the JSON body has a "__proto__" key, which is refused', read: (b) => b.message },
  ];
  for (const r of rows) {
    const res = await raw('POST', r.path, { headers: { ...r.headers, 'content-type': 'application/json' }, body: r.body });
    assert.equal(res.status, 400, res.text);
    assert.equal(r.read(res.body), r.want, r.body);
  }
  const bad = await raw('POST', '/api/v1/pools', { headers: { ...sys, 'content-type': 'application/json' }, body: '{"name":' });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /^malformed JSON: /);
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing was polluted');
  assert.equal((await api(d.url, 'GET', '/api/v1/pools', undefined, sys)).body.length, 0, 'no pool was made');
});

test('a multipart part without a name is a clear 400 on a form\'s public address, never internal text', async () => {
  const bodies = [
    '--x\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--x--\r\n',
    '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na@example.com\r\n--x\r\nContent-Disposition: form-data; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--x--\r\n',
  ];
  for (const body of bodies) {
    const res = await raw('POST', `/f/${formId}`, { headers: { 'content-type': 'multipart/form-data; boundary=x', accept: 'application/json' }, body });
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(res.body, { name: 'validation_error', message: 'a multipart part has no name: each part needs Content-Disposition: form-data; name="…"' });
  }
  const sub = await publicClient(d, formKey)('GET', `/form/${formId}/submission`);
  assert.equal(sub.body.total, 0, 'nothing was stored');
});
