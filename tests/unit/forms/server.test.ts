import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { publicApi } from '../../../runtime/forms/public/routes/server.js';
import { KeyRateLimiter } from '../../../runtime/forms/public/rate-limit.js';
import type { FormKeyLookup } from '../../../runtime/forms/public/key-lookup.js';
import { notFound } from '../../../runtime/errors.js';

/** A key lookup of one key that records which keys were used. */
function fakeKeys(): FormKeyLookup & { touched: string[] } {
  const touched: string[] = [];
  return {
    touched,
    authenticate: (raw) => (raw === 'good' ? { keyId: 'k1', keyName: 'site', tenantId: 't1', scopes: ['forms:read'], formId: null } : undefined),
    touch: (id) => { touched.push(id); },
  };
}

async function server(keys: FormKeyLookup) {
  const app = Fastify();
  await app.register(publicApi({
    keys,
    limiter: new KeyRateLimiter(100),
    routes: [async (r) => {
      r.get('/ok', { config: { ownAuth: true, scope: 'forms:read' } }, async () => ({ ok: true }));
      r.get('/missing', { config: { ownAuth: true, scope: 'forms:read' } }, async () => { throw notFound('form x not found'); });
      r.get('/write', { config: { ownAuth: true, scope: 'forms:write' } }, async () => ({ ok: true }));
      r.get('/undeclared', { config: { ownAuth: true } }, async () => ({ ok: true }));
    }],
  }));
  return app;
}

test('the key is noted as used after a successful answer only', async () => {
  const keys = fakeKeys();
  const app = await server(keys);
  const get = (url: string, key?: string) => app.inject({ method: 'GET', url: `/public/v1${url}`, headers: key ? { authorization: `Bearer ${key}` } : {} });
  assert.equal((await get('/ok', 'good')).statusCode, 200);
  assert.deepEqual((await get('/missing', 'good')).json(), { name: 'not_found', message: 'form x not found' });
  assert.equal((await get('/write', 'good')).statusCode, 403);
  assert.equal((await get('/ok', 'bad')).statusCode, 401);
  assert.deepEqual(keys.touched, ['k1'], 'only the 200');
  await app.close();
});

test('a route without a scope is refused (fails closed)', async () => {
  const app = await server(fakeKeys());
  const res = await app.inject({ method: 'GET', url: '/public/v1/undeclared', headers: { authorization: 'Bearer good' } });
  assert.deepEqual([res.statusCode, res.json()], [403, { name: 'forbidden', message: 'route has no scope declared' }]);
  await app.close();
});
