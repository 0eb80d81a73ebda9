import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { FormKeyStore } from '../../runtime/forms/keys/store.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// The /public/v1 server (docs/forms.md "The /public/v1 API"): keys, scopes, single-form keys,
// errors as {name, message}, body limits, media types, the rate limit and the OpenAPI document.

const SYSTEM_KEY = 'system-key-for-forms-tests';
let d: TestDaemon;

before(async () => {
  d = await startTestDaemon({ api: { bodyLimit: 2048 } }, { GSLB_API_KEY: SYSTEM_KEY });
});
after(async () => { await d?.stop(); });

const isError = (res: { status: number; body: unknown }, status: number, name: string, message?: RegExp) => {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body as object).sort(), ['message', 'name']);
  assert.equal((res.body as { name: string }).name, name);
  if (message) assert.match((res.body as { message: string }).message, message);
};

test('401 unauthorized: no key, a malformed header, an unknown key, the system key, a legacy tenant key', async () => {
  isError(await publicClient(d, undefined)('GET', '/form'), 401, 'unauthorized', /API key required/);
  isError(await publicClient(d, undefined)('GET', '/form', undefined, { authorization: 'Basic abc' }), 401, 'unauthorized', /API key required/);
  isError(await publicClient(d, 'gslbf_unknown')('GET', '/form'), 401, 'unauthorized', /invalid API key/);
  isError(await publicClient(d, SYSTEM_KEY)('GET', '/plan'), 401, 'unauthorized');
  const tenant = await api(d.url, 'POST', '/api/v1/tenants', { id: 'legacy' }, { authorization: `Bearer ${SYSTEM_KEY}` });
  assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
  const legacy = await api(d.url, 'POST', '/api/v1/tenants/legacy/apikeys', { name: 'old' }, { authorization: `Bearer ${SYSTEM_KEY}` });
  assert.equal(legacy.status, 201, JSON.stringify(legacy.body));
  isError(await publicClient(d, legacy.body.key as string)('GET', '/form'), 401, 'unauthorized');
});

test('a form key is refused on /api/v1', async () => {
  const { key } = addFormKey(d);
  const res = await api(d.url, 'GET', '/api/v1/pools', undefined, { authorization: `Bearer ${key}` });
  assert.equal(res.status, 401);
});

test('403 forbidden: a key without the route scope', async () => {
  const read = publicClient(d, addFormKey(d, { scopes: ['forms:read'] }).key);
  assert.equal((await read('GET', '/form')).status, 200);
  isError(await read('POST', '/form', { name: 'x' }), 403, 'forbidden', /lacks the scope forms:write/);
  const subs = publicClient(d, addFormKey(d, { scopes: ['submissions:read'] }).key);
  isError(await subs('GET', '/form'), 403, 'forbidden', /lacks the scope forms:read/);
  isError(await subs('GET', '/plan'), 403, 'forbidden');
  isError(await subs('GET', '/action-types'), 403, 'forbidden');
});

test('403 forbidden: a single-form key reaches its form only and creates none', async () => {
  const admin = publicClient(d, addFormKey(d, { tenantId: 'single' }).key);
  const mine = (await admin('POST', '/form', { name: 'Mine' })).body.id as string;
  const other = (await admin('POST', '/form', { name: 'Other' })).body.id as string;
  const one = publicClient(d, addFormKey(d, { tenantId: 'single', formId: mine, name: 'site key' }).key);
  const list = await one('GET', '/form');
  assert.deepEqual(list.body.data.map((f: { id: string }) => f.id), [mine]);
  assert.equal(list.body.total, 1);
  assert.equal((await one('GET', `/form/${mine}`)).status, 200);
  assert.equal((await one('PATCH', `/form/${mine}`, { form_id: mine, description: 'ok' })).status, 200);
  isError(await one('GET', `/form/${other}`), 403, 'forbidden', /API key "site key" is restricted to form/);
  isError(await one('GET', `/form/${other}/snippets`), 403, 'forbidden');
  isError(await one('PATCH', `/form/${mine}`, { form_id: other, description: 'no' }), 403, 'forbidden');
  isError(await one('POST', '/form', { name: 'New' }), 403, 'forbidden', /cannot create forms/);
  isError(await one('POST', `/form/${mine}/duplicate`, { form_id: mine }), 403, 'forbidden', /cannot create forms/);
  isError(await one('GET', '/form/does-not-exist'), 403, 'forbidden', undefined);
  assert.equal((await one('GET', '/plan')).status, 200);
  assert.equal((await one('GET', '/action-types')).status, 200);
});

test('404 not_found: an unknown form, an unknown route under /public/v1', async () => {
  const call = publicClient(d, addFormKey(d).key);
  isError(await call('GET', '/form/nope'), 404, 'not_found', /form nope not found/);
  isError(await call('GET', '/submissions'), 404, 'not_found', /no route for GET \/public\/v1\/submissions/);
  isError(await publicClient(d, undefined)('GET', '/nothing/here'), 404, 'not_found');
});

test('400 validation_error, 413 payload_too_large and 415 unsupported_media_type', async () => {
  const call = publicClient(d, addFormKey(d).key);
  isError(await call('POST', '/form', '{"name":', {}), 400, 'validation_error', /malformed JSON/);
  isError(await call('POST', '/form', {}), 400, 'validation_error', /name is required/);
  isError(await call('POST', '/form', { name: 'x', colour: 'red' }), 400, 'validation_error', /unknown field "colour"/);
  isError(await call('POST', '/form', { name: 'x', max_links: -1 }), 400, 'validation_error', /max_links: must be >= 0/);
  isError(await call('GET', '/form?limit=500'), 400, 'validation_error', /limit: must be a whole number from 1 to 100/);
  isError(await call('GET', '/form?sort=colour'), 400, 'validation_error', /sort: must be one of "created_at", "updated_at", "name"/);
  isError(await call('POST', '/form', { name: 'x'.repeat(100), description: 'y'.repeat(3000) }), 413, 'payload_too_large');
  isError(await call('POST', '/form', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
  isError(await call('POST', '/form', 'name', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
});

test('a key\'s use is recorded after a successful answer, not after an error', async () => {
  const { key, id } = addFormKey(d);
  const store = new FormKeyStore(d.core);
  const call = publicClient(d, key);
  assert.equal((await call('GET', '/form/nope')).status, 404);
  assert.equal((await call('POST', '/form', { colour: 'red' })).status, 400);
  assert.equal(store.lastUsed(id), undefined);
  assert.equal((await call('GET', '/plan')).status, 200);
  assert.equal(typeof store.lastUsed(id), 'number');
});

test('the OpenAPI document lists every /public/v1 route with its operation id, scope, bearer security and {name, message} errors', async () => {
  const doc = (await api(d.url, 'GET', '/api/v1/openapi.json')).body as {
    paths: Record<string, Record<string, { operationId: string; tags: string[]; security: unknown; 'x-scope': string; responses: Record<string, { $ref?: string; content?: Record<string, { schema: { $ref?: string } }> }> }>>;
  };
  const want: Record<string, [string, string]> = {
    'get /public/v1/action-types': ['get_action_types', 'forms:read'],
    'get /public/v1/form': ['get_form', 'forms:read'],
    'post /public/v1/form': ['post_form', 'forms:write'],
    'get /public/v1/form/{id}': ['get_form_id', 'forms:read'],
    'patch /public/v1/form/{id}': ['patch_form_id', 'forms:write'],
    'delete /public/v1/form/{id}': ['delete_form_id', 'forms:write'],
    'get /public/v1/form/{id}/action': ['get_form_id_action', 'forms:read'],
    'post /public/v1/form/{id}/action': ['post_form_id_action', 'forms:write'],
    'post /public/v1/form/{id}/duplicate': ['post_form_id_duplicate', 'forms:write'],
    'get /public/v1/form/{id}/fields': ['get_form_id_fields', 'forms:read'],
    'put /public/v1/form/{id}/schema': ['put_form_id_schema', 'forms:write'],
    'get /public/v1/form/{id}/snippets': ['get_form_id_snippets', 'forms:read'],
    'get /public/v1/form/{id}/submission': ['get_form_id_submission', 'submissions:read'],
    'post /public/v1/form/{id}/submission/{sid}/claim': ['post_form_id_submission_sid_claim', 'forms:write'],
    'post /public/v1/form/{id}/replay': ['post_form_id_replay', 'forms:write'],
    'get /public/v1/form/{id}/submission/{sid}/file/{index}': ['get_form_id_submission_sid_file_index', 'submissions:read'],
    'patch /public/v1/action/{id}': ['patch_action_id', 'forms:write'],
    'delete /public/v1/action/{id}': ['delete_action_id', 'forms:write'],
    'post /public/v1/action/{id}/retry': ['post_action_id_retry', 'forms:write'],
    'post /public/v1/action/{id}/test': ['post_action_id_test', 'forms:write'],
    'get /public/v1/action/{id}/deliveries': ['get_action_id_deliveries', 'forms:read'],
    'post /public/v1/email-template/preview': ['post_email_template_preview', 'forms:write'],
    'get /public/v1/domain': ['get_domain', 'forms:read'],
    'post /public/v1/domain': ['post_domain', 'forms:write'],
    'delete /public/v1/domain/{id}': ['delete_domain_id', 'forms:write'],
    'post /public/v1/domain/{id}/verify': ['post_domain_id_verify', 'forms:write'],
    'get /public/v1/plan': ['get_plan', 'forms:read'],
  };
  const got: Record<string, [string, string]> = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith('/public/v1/')) continue;
    for (const [method, op] of Object.entries(item)) {
      got[`${method} ${path}`] = [op.operationId, op['x-scope']];
      assert.deepEqual(op.tags, ['forms'], `${method} ${path}`);
      assert.deepEqual(op.security, [{ bearer: [] }], `${method} ${path}`);
      for (const code of ['401', '403', '429']) {
        const schema = op.responses[code]?.content?.['application/json']?.schema;
        assert.equal(schema?.$ref, '#/components/schemas/api-forms-Error', `${method} ${path} ${code}`);
      }
      const success = Object.keys(op.responses).filter((s) => /^2/.test(s));
      assert.equal(success.length, 1);
      const media = path.endsWith('/file/{index}') ? 'application/octet-stream' : 'application/json';
      assert.ok(op.responses[success[0]!]!.content?.[media], `${method} ${path}: the success body is documented as ${media}`);
    }
  }
  assert.deepEqual(got, want);
});

test('every /public/v1 response so far matched the OpenAPI document (checked on stop)', () => {
  assert.ok(d.openapi.checked > 30, `only ${d.openapi.checked} responses were checked`);
  assert.deepEqual(d.openapi.violations(), []);
});

test('429 rate_limited with Retry-After past forms.rateLimits.perKeyPerMinute, per key', async () => {
  const small = await startTestDaemon({ forms: { rateLimits: { perKeyPerMinute: 3 } } } as never);
  try {
    const call = publicClient(small, addFormKey(small, { name: 'busy site' }).key);
    for (let i = 0; i < 3; i++) assert.equal((await call('GET', '/plan')).status, 200);
    const res = await call('GET', '/plan');
    isError(res, 429, 'rate_limited', /too many requests for API key "busy site"; retry in \d+ s/);
    const retry = Number(res.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    assert.equal((await publicClient(small, addFormKey(small).key)('GET', '/plan')).status, 200, 'another key has its own budget');
  } finally {
    await small.stop();
  }
});
