import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { lintOpenApi } from '../helpers/openapi-lint.js';
import { addFormKey, publicClient } from './forms-fixture.js';

const demo = { demo: { backends: [{ name: 'demo-1', host: '127.0.0.1', port: 0 }] } };

test('openapi document: the served document is valid for swagger-parser and has no spectral:oas error', async (t) => {
  // the demo backends too, so the demo routes are in the document
  const d = await startTestDaemon({}, {}, { ports: demo });
  try {
    const res = await fetch(`${d.url}/api/v1/openapi.json`);
    assert.equal(res.status, 200);
    const text = await res.text();
    const doc = JSON.parse(text) as { openapi: string; paths: Record<string, unknown> };
    assert.equal(doc.openapi, '3.0.3');
    assert.ok(doc.paths['/api/v1/demo/backends/{name}/{action}'], 'the demo routes are documented');
    const report = await lintOpenApi(text);
    assert.deepEqual(report.parserErrors, [], 'swagger-parser validate');
    assert.deepEqual(report.spectralErrors, [], 'spectral:oas errors');
    const warnings = Object.values(report.spectralWarnings).reduce((a, b) => a + b, 0);
    t.diagnostic(`spectral:oas warnings: ${warnings} ${JSON.stringify(report.spectralWarnings)}`);
    console.log(`spectral:oas: 0 errors, ${warnings} warnings ${JSON.stringify(report.spectralWarnings)}`);
  } finally {
    await d.stop();
  }
});

test('openapi document: no schema has an empty required list', async () => {
  const d = await startTestDaemon();
  try {
    const text = await (await fetch(`${d.url}/api/v1/openapi.json`)).text();
    assert.doesNotMatch(text, /"required":\[\]/);
    const doc = JSON.parse(text) as { components: { schemas: Record<string, { required?: unknown; properties?: object }> } };
    // the schema file keeps its empty list (valid JSON Schema); the document drops it
    assert.ok(doc.components.schemas['api-ws-WsQuery']?.properties);
    assert.equal(doc.components.schemas['api-ws-WsQuery']?.required, undefined);
  } finally {
    await d.stop();
  }
});

test('openapi document: the public submission endpoint (three media types, preflight, thank-you page) and the file download are documented as answered', async () => {
  const d = await startTestDaemon({ forms: { tiers: { files: { forms: 5, actionsPerForm: 1, submissionsPerMonth: 100, fileBytes: 100_000 } }, defaultTier: 'files' } } as never);
  try {
    const text = await (await fetch(`${d.url}/api/v1/openapi.json`)).text();
    type Op = { operationId: string; security: unknown[]; requestBody?: { content: Record<string, unknown> }; responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }> };
    const doc = JSON.parse(text) as { paths: Record<string, Record<string, Op>> };
    const post = doc.paths['/f/{formId}']?.post;
    assert.ok(post, 'POST /f/{formId} is in the document');
    assert.equal(post.operationId, 'submitForm');
    assert.deepEqual(post.security, [], 'no credentials');
    assert.deepEqual(Object.keys(post.requestBody!.content).sort(), ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
    assert.deepEqual(Object.keys(post.responses).sort(), ['200', '303', '400', '403', '404', '413', '415', '422', '429']);
    assert.ok(post.responses['303']!.headers!.location);
    assert.deepEqual(Object.keys(post.responses['404']!.content!).sort(), ['application/json', 'text/html']);
    assert.equal(doc.paths['/f/{formId}']?.options?.operationId, 'preflightFormSubmission');
    assert.deepEqual(Object.keys(doc.paths['/f/{formId}/thanks']?.get?.responses['200']?.content ?? {}), ['text/html']);
    const file = doc.paths['/public/v1/form/{id}/submission/{sid}/file/{index}']!.get!.responses['200']!;
    assert.deepEqual(Object.keys(file.content!), ['application/octet-stream']);
    assert.deepEqual(Object.keys(file.headers!).sort(), ['content-disposition', 'x-content-type-options']);

    // every answer below is checked against the document (tests/helpers/openapi-check.ts)
    const key = addFormKey(d).key;
    const call = publicClient(d, key);
    const id = (await call('POST', '/form', { name: 'Contact' })).body.id as string;
    const url = `${d.url}/f/${id}`;
    const json = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Ada', n: 1, ok: true, none: null, tags: ['a', 'b'] }) });
    assert.equal(json.status, 200);
    const form = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=Ada&tags=a&tags=b', redirect: 'manual' });
    assert.equal(form.status, 303);
    const fd = new FormData();
    fd.append('name', 'Ada');
    fd.append('cv', new Blob(['<b>hi</b>'], { type: 'text/html' }), 'cv.html');
    assert.equal((await fetch(url, { method: 'POST', body: fd, headers: { accept: 'application/json' } })).status, 200);
    assert.equal((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 400);
    assert.equal((await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' })).status, 415);
    assert.equal((await fetch(`${d.url}/f/nope`, { method: 'POST', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status, 404);
    assert.equal((await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://site.example' } })).status, 204);
    const thanks = await fetch(`${url}/thanks`);
    assert.equal(thanks.status, 200);
    assert.match(thanks.headers.get('content-type')!, /^text\/html/);
    const sub = (await call('GET', `/form/${id}/submission`)).body.data[0];
    const dl = await fetch(`${d.url}/public/v1/form/${id}/submission/${sub.id}/file/0`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(dl.status, 200);
    assert.equal(dl.headers.get('content-type'), 'application/octet-stream', 'the uploader\'s text/html is not what is served');
    await dl.arrayBuffer();
    assert.deepEqual(d.openapi.violations(), []);
    assert.equal(d.openapi.checked, 11, "every answer above was checked");
  } finally {
    await d.stop();
  }
});

test('openapi document: request schemas are as strict as the server for a tool that knows no project format (member address, password, page size)', async () => {
  const d = await startTestDaemon();
  try {
    const doc = JSON.parse(await (await fetch(`${d.url}/api/v1/openapi.json`)).text()) as { components: { schemas: Record<string, unknown> } };
    // a generic validator: standard formats only, every unknown format ignored
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: 'doc.json', components: doc.components });
    const valid = (name: string, value: unknown) => ajv.validate({ $ref: `doc.json#/components/schemas/${name}` }, value);
    assert.equal(valid('resources-MemberCreate', { ipAddress: '', port: 1 }), false, 'an empty address is refused by the document');
    assert.equal(valid('resources-MemberCreate', { ipAddress: 'fe80::1%eth0', port: 1 }), false);
    assert.equal(valid('resources-MemberCreate', { ipAddress: '192.0.2.1', port: 1 }), true);
    assert.equal(valid('api-auth-UserCreate', { email: 'a@example.test', password: 'short', role: 'viewer' }), false);
    assert.equal(valid('api-auth-UserUpdate', { password: '' }), true, 'empty keeps the password');
    assert.equal(valid('api-auth-UserUpdate', { password: 'short' }), false);
    assert.equal(valid('api-forms-PageQuery', { limit: '101' }), false);
    assert.equal(valid('api-forms-PageQuery', { limit: '100', page: '2' }), true);
    assert.equal(valid('api-forms-PageQuery', { page: '0' }), false);

    const pool = await api(d.url, 'POST', '/api/v1/pools', { name: 'p' });
    assert.deepEqual(await api(d.url, 'POST', `/api/v1/pools/${pool.body.id}/members`, { ipAddress: '', port: 1 }).then((r) => [r.status, r.body.error]), [400, 'ipAddress: must be a valid IPv4 or IPv6 address']);
    // the server counts characters as the schema does (code points): 200 emoji are 400 UTF-16 units and still 200 characters
    const emoji = '😀'.repeat(200);
    assert.equal(valid('api-auth-UserCreate', { email: 'e@example.test', password: emoji, role: 'viewer' }), true);
    assert.equal((await api(d.url, 'POST', '/api/v1/users', { email: 'e@example.test', password: emoji, role: 'viewer' })).status, 201);
    const long = await api(d.url, 'POST', '/api/v1/users', { email: 'f@example.test', password: 'x'.repeat(257), role: 'viewer' });
    assert.deepEqual([long.status, long.body.error], [400, 'password: must be 8 to 256 characters']);
    const history = await api(d.url, 'GET', '/api/v1/gitops/history?limit=1001');
    assert.deepEqual([history.status, history.body.error], [400, 'limit: must be a whole number from 1 to 1000']);
  } finally {
    await d.stop();
  }
});
