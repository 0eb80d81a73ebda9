import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { PACKAGE_ROOT } from '../../runtime/paths.js';

const SYS = randomBytes(32).toString('hex');
const KEY = randomBytes(32).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
const POOL_YAML = readFileSync(join(PACKAGE_ROOT, 'tests/golden/create-from-empty/desired/pools/eu-west.yaml'), 'utf8');

type Call = [method: string, path: string, body: unknown, headers: Record<string, string>, want: number];

/**
 * Every auth, user, tenant, mail-settings and GitOps operation answers as the OpenAPI document
 * says: the daemon's response check (tests/helpers/openapi-check.ts) sees each answer below,
 * success and error alike, and `stop()` fails on any status or body the document does not have.
 */
test('OpenAPI document: auth, users, tenants, mail settings and gitops answers match it', async () => {
  const d = await startTestDaemon({ auth: { bcryptCost: 10 } } as never, { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: KEY });
  try {
    const call = async ([method, path, body, headers, want]: Call) => {
      const r = await api(d.url, method, path, body, headers);
      assert.equal(r.status, want, `${method} ${path}: ${JSON.stringify(r.body)}`);
      return r;
    };
    for (const c of [
      ['GET', '/api/v1/auth/sso', undefined, {}, 200],
      ['GET', '/api/v1/auth/oidc/authorize', undefined, {}, 404],
      ['GET', '/api/v1/auth/oidc/callback?state=s&code=c', undefined, {}, 404],
      ['POST', '/api/v1/auth/setup', { email: 'root@example.test', password: 'root-pass-123', displayName: 'Root' }, {}, 201],
      ['POST', '/api/v1/auth/setup', { email: 'again@example.test', password: 'root-pass-123' }, {}, 404],
      ['POST', '/api/v1/auth/login', { email: 'root@example.test', password: 'wrong-pass-123' }, {}, 401],
      ['POST', '/api/v1/auth/login', { email: 'root@example.test' }, {}, 400],
      ['POST', '/api/v1/auth/password-reset', { email: 'root@example.test' }, {}, 503],
      ['POST', '/api/v1/auth/password-reset/confirm', { token: 'nope', password: 'new-pass-1234' }, {}, 400],
      ['GET', '/api/v1/auth/me', undefined, sys, 200],
      ['GET', '/api/v1/auth/me', undefined, {}, 401],
    ] as Call[]) await call(c);

    const login = await call(['POST', '/api/v1/auth/login', { email: 'root@example.test', password: 'root-pass-123' }, {}, 200]);
    assert.match(login.headers.get('set-cookie')!, /^gslb_session=/);
    const S = { cookie: `gslb_session=${login.body.token}` };
    assert.equal((await call(['GET', '/api/v1/auth/me', undefined, S, 200])).body.kind, 'user');
    await call(['POST', '/api/v1/auth/totp/setup', undefined, S, 200]);
    await call(['POST', '/api/v1/auth/totp/verify', { code: 'x' }, S, 400]);
    await call(['POST', '/api/v1/auth/totp/setup', undefined, sys, 403]);

    const user = (await call(['POST', '/api/v1/users', { email: 'op@example.test', password: 'op-pass-1234', role: 'operator' }, S, 201])).body;
    assert.equal(user.passwordHash, undefined);
    for (const c of [
      ['POST', '/api/v1/users', { email: 'op@example.test', password: 'op-pass-1234', role: 'operator' }, S, 409],
      ['POST', '/api/v1/users', { email: 'x@example.test', password: 'op-pass-1234', role: 'king' }, S, 400],
      ['GET', '/api/v1/users', undefined, S, 200],
      ['GET', `/api/v1/users/${user.userId}`, undefined, S, 200],
      ['PUT', `/api/v1/users/${user.userId}`, { displayName: 'Op', role: 'viewer' }, S, 200],
      ['DELETE', `/api/v1/users/${user.userId}`, undefined, S, 204],
      ['GET', `/api/v1/users/${user.userId}`, undefined, S, 404],
      ['DELETE', `/api/v1/users/${login.body.userId}`, undefined, S, 403],

      ['GET', '/api/v1/tenants', undefined, sys, 200],
      ['GET', '/api/v1/tenants', undefined, S, 403],
      ['POST', '/api/v1/tenants', { id: 'acme', name: 'Acme' }, sys, 201],
      ['POST', '/api/v1/tenants', { id: 'acme' }, sys, 409],
      ['POST', '/api/v1/tenants', { id: 'Not Valid' }, sys, 400],
      ['GET', '/api/v1/tenants/nope/apikeys', undefined, sys, 404],
    ] as Call[]) await call(c);
    const key = (await call(['POST', '/api/v1/tenants/acme/apikeys', { name: 'ci' }, sys, 201])).body;
    assert.match(key.key, /^gslbk_/);
    assert.equal(key.keyHash, undefined);
    assert.deepEqual((await call(['GET', '/api/v1/tenants/acme/apikeys', undefined, sys, 200])).body.map((k: { key?: string }) => k.key), [undefined]);
    await call(['DELETE', `/api/v1/tenants/acme/apikeys/${key.id}`, undefined, sys, 204]);
    await call(['DELETE', `/api/v1/tenants/acme/apikeys/${key.id}`, undefined, sys, 404]);

    for (const c of [
      ['GET', '/api/v1/settings/smtp', undefined, S, 200],
      ['PUT', '/api/v1/settings/smtp', { host: 'mail.example.test', port: 587, to: ['ops@example.test'], password: 'smtp-secret' }, S, 200],
      ['PUT', '/api/v1/settings/smtp', { host: 'mail.example.test', port: 0 }, S, 400],
      ['POST', '/api/v1/settings/smtp/test', { to: 'not an address' }, S, 400],
      ['DELETE', '/api/v1/settings/smtp', undefined, S, 204],

      ['GET', '/api/v1/gitops/status', undefined, sys, 200],
      ['GET', '/api/v1/gitops/history', undefined, sys, 200],
      ['GET', '/api/v1/gitops/history?limit=0', undefined, sys, 400],
      ['POST', '/api/v1/gitops/reconcile', { force: false }, sys, 400],
      ['POST', '/api/v1/gitops/plan', { files: [{ path: 'pools/eu-west.yaml', text: POOL_YAML }] }, sys, 200],
      ['POST', '/api/v1/gitops/plan', { files: [{ path: 'bad.yaml', text: 'kind: [' }] }, sys, 200],
      ['POST', '/api/v1/gitops/webhook', { ref: 'refs/heads/main', after: 'abc' }, {}, 403],
      ['POST', '/api/v1/auth/logout', undefined, S, 204],
    ] as Call[]) await call(c);
    assert.deepEqual(d.openapi.violations(), []);
    assert.equal(d.openapi.checked, 48, 'every answer above was checked');
  } finally {
    await d.stop();
  }
});
