import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { FormKeyStore, TOUCH_INTERVAL_MS } from '../../runtime/forms/keys/store.js';
import { loadManifests } from '../../gitops/load/index.js';
import { validateManifests } from '../../gitops/validate/validate.js';
import '../../runtime/kinds-all.js';
import { planChanges } from '../../core/plan/plan.js';

const SYS = randomBytes(32).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };

async function daemon(): Promise<TestDaemon> {
  return startTestDaemon({ auth: { bcryptCost: 10 } } as never, { GSLB_API_KEY: SYS });
}

async function login(d: TestDaemon, email: string, password: string): Promise<Record<string, string>> {
  const r = await api(d.url, 'POST', '/api/v1/auth/login', { email, password });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return { authorization: `Bearer ${r.body.token as string}` };
}

test('form keys: made once over /api/v1/apikeys, only the hash stored, used on /public/v1, listed with last use, deleted', async () => {
  const d = await daemon();
  try {
    const made = await api(d.url, 'POST', '/api/v1/apikeys', { name: 'site', scopes: ['forms:read', 'forms:write'] }, sys);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.match(made.body.key, /^gslbf_[A-Za-z0-9_-]{43}$/);
    assert.equal(made.headers.get('cache-control'), 'no-store');
    assert.equal(made.body.tenantId, 'default');
    assert.deepEqual(made.body.scopes, ['forms:read', 'forms:write']);
    assert.equal(made.body.lastUsedAt, null);
    const key = made.body.key as string;

    // only the SHA-256 hex is in the database
    const stored = d.core.db.prepare("SELECT data FROM resources WHERE kind = 'formkey'").get() as { data: string };
    assert.ok(!stored.data.includes(key));
    assert.equal(JSON.parse(stored.data).keyHash, createHash('sha256').update(key).digest('hex'));

    // the key works on /public/v1 and its use is recorded
    const forms = await api(d.url, 'GET', '/public/v1/form', undefined, { authorization: `Bearer ${key}` });
    assert.equal(forms.status, 200, JSON.stringify(forms.body));
    const listed = await api(d.url, 'GET', '/api/v1/apikeys', undefined, sys);
    assert.equal(listed.status, 200);
    assert.equal(listed.body.length, 1);
    assert.equal(listed.body[0].name, 'site');
    assert.equal(typeof listed.body[0].lastUsedAt, 'number');
    assert.ok(!JSON.stringify(listed.body).includes(key) && !JSON.stringify(listed.body).includes('keyHash'));

    // a second key of the same name: 409; bad scopes: 400 naming the allowed ones
    assert.equal((await api(d.url, 'POST', '/api/v1/apikeys', { name: 'site', scopes: ['forms:read'] }, sys)).status, 409);
    const bad = await api(d.url, 'POST', '/api/v1/apikeys', { name: 'x', scopes: ['pools:write'] }, sys);
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /scopes/);
    assert.equal((await api(d.url, 'POST', '/api/v1/apikeys', { name: 'y', scopes: [] }, sys)).status, 400);
    // a single-form key must name a form of the workspace
    const noForm = await api(d.url, 'POST', '/api/v1/apikeys', { name: 'z', scopes: ['forms:read'], formId: 'no-such-form' }, sys);
    assert.equal(noForm.status, 400);
    assert.match(noForm.body.error, /formId/);

    // deleted: the key no longer authenticates
    assert.equal((await api(d.url, 'DELETE', `/api/v1/apikeys/${made.body.id as string}`, undefined, sys)).status, 204);
    assert.equal((await api(d.url, 'GET', '/public/v1/form', undefined, { authorization: `Bearer ${key}` })).status, 401);
    assert.equal((await api(d.url, 'DELETE', `/api/v1/apikeys/${made.body.id as string}`, undefined, sys)).status, 404);
    // the secret never reaches the log
    assert.ok(!d.logs.text().includes(key));
  } finally {
    await d.stop();
  }
});

test('form keys: roles, workspaces apart, and form keys and legacy tenant keys never stand in for each other', async () => {
  const d = await daemon();
  try {
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/setup', { email: 'admin@default.test', password: 'admin-pass-1' })).status, 201);
    assert.equal((await api(d.url, 'POST', '/api/v1/tenants', { id: 'acme', name: 'Acme' }, sys)).status, 201);
    for (const [email, role, tenantId] of [['op@default.test', 'operator', 'default'], ['view@default.test', 'viewer', 'default'], ['admin@acme.test', 'tenant_admin', 'acme']]) {
      assert.equal((await api(d.url, 'POST', '/api/v1/users', { email, password: 'long-pass-12', role, tenantId }, sys)).status, 201);
    }
    const admin = await login(d, 'admin@default.test', 'admin-pass-1');
    const operator = await login(d, 'op@default.test', 'long-pass-12');
    const viewer = await login(d, 'view@default.test', 'long-pass-12');
    const acme = await login(d, 'admin@acme.test', 'long-pass-12');

    const mine = await api(d.url, 'POST', '/api/v1/apikeys', { name: 'default site', scopes: ['forms:read'] }, admin);
    assert.equal(mine.status, 201);
    const theirs = await api(d.url, 'POST', '/api/v1/apikeys', { name: 'acme site', scopes: ['forms:read'] }, acme);
    assert.equal(theirs.status, 201);
    assert.equal(theirs.body.tenantId, 'acme');
    // operator lists, may not make or delete; viewer neither
    assert.equal((await api(d.url, 'GET', '/api/v1/apikeys', undefined, operator)).status, 200);
    assert.equal((await api(d.url, 'POST', '/api/v1/apikeys', { name: 'op', scopes: ['forms:read'] }, operator)).status, 403);
    assert.equal((await api(d.url, 'DELETE', `/api/v1/apikeys/${mine.body.id as string}`, undefined, operator)).status, 403);
    assert.equal((await api(d.url, 'GET', '/api/v1/apikeys', undefined, viewer)).status, 403);
    // each workspace sees only its keys; another workspace's key is not found; naming another workspace is 403
    const list = await api(d.url, 'GET', '/api/v1/apikeys', undefined, admin);
    assert.deepEqual(list.body.map((k: { name: string }) => k.name), ['default site']);
    assert.equal((await api(d.url, 'DELETE', `/api/v1/apikeys/${theirs.body.id as string}`, undefined, admin)).status, 404);
    assert.equal((await api(d.url, 'GET', '/api/v1/apikeys?tenant=acme', undefined, admin)).status, 403);
    const sysAcme = await api(d.url, 'GET', '/api/v1/apikeys?tenant=acme', undefined, sys);
    assert.deepEqual(sysAcme.body.map((k: { name: string }) => k.name), ['acme site']);

    // a form key is refused on /api/v1; a legacy tenant key is refused on /public/v1
    assert.equal((await api(d.url, 'GET', '/api/v1/pools', undefined, { authorization: `Bearer ${mine.body.key as string}` })).status, 401);
    const legacy = await api(d.url, 'POST', '/api/v1/tenants/default/apikeys', { name: 'legacy' }, sys);
    assert.equal(legacy.status, 201);
    assert.equal((await api(d.url, 'GET', '/public/v1/form', undefined, { authorization: `Bearer ${legacy.body.key as string}` })).status, 401);
    // a user session is no form key either
    assert.equal((await api(d.url, 'GET', '/public/v1/form', undefined, admin)).status, 401);
  } finally {
    await d.stop();
  }
});

test('form keys: the last-used time is written at most once a minute', async () => {
  const d = await daemon();
  try {
    let now = 1_800_000_000_000;
    const store = new FormKeyStore(d.core, () => now);
    const k = store.create('default', { name: 'clocked', scopes: ['forms:read'] });
    store.touch(k.id);
    assert.equal(store.lastUsed(k.id), now);
    const first = now;
    now += TOUCH_INTERVAL_MS - 1;
    store.touch(k.id);
    assert.equal(store.lastUsed(k.id), first);
    now += 1;
    store.touch(k.id);
    assert.equal(store.lastUsed(k.id), now);
    assert.equal(store.authenticate(k.key)?.keyName, 'clocked');
    assert.equal(store.authenticate(`${k.key}x`), undefined);
  } finally {
    await d.stop();
  }
});

test('a key declared in git (kind ApiKey) authenticates with its secret, is listed with origin git, and cannot be deleted over REST', async () => {
  const d = await daemon();
  try {
    const secret = `gslbf_${randomBytes(32).toString('base64url')}`;
    const manifest = `apiVersion: gslb/v1\nkind: ApiKey\nmetadata: {name: from-git}\nspec: {hash: ${createHash('sha256').update(secret).digest('hex')}, scopes: [forms:read]}\n`;
    const v = validateManifests(loadManifests([{ path: 'keys/from-git.yaml', text: manifest }]).manifests);
    assert.deepEqual(v.problems, []);
    d.core.apply(planChanges({ desired: v.desired, actual: d.core.holder.current, revision: 'd'.repeat(40), newId: () => d.core.newId(), tenantId: 'default' }));
    assert.equal((await api(d.url, 'GET', '/public/v1/form', undefined, { authorization: `Bearer ${secret}` })).status, 200);
    assert.equal((await api(d.url, 'POST', '/public/v1/form', { name: 'x' }, { authorization: `Bearer ${secret}` })).status, 403, 'forms:read only');
    const listed = await api(d.url, 'GET', '/api/v1/apikeys', undefined, sys);
    assert.deepEqual(listed.body.map((k: { name: string; origin: string }) => [k.name, k.origin]), [['from-git', 'git']]);
    const del = await api(d.url, 'DELETE', `/api/v1/apikeys/${listed.body[0].id as string}`, undefined, sys);
    assert.equal(del.status, 409);
    assert.match(del.body.error, /declared in git \(keys\/from-git\.yaml\)/);
  } finally {
    await d.stop();
  }
});
