import assert from 'node:assert/strict';
import { api, type TestDaemon } from './daemon.js';

/** Creates tenant `id` and a legacy API key for it with the system key `sys`; returns that key's headers. */
export async function tenantKey(d: TestDaemon, id: string, sys: Record<string, string>): Promise<Record<string, string>> {
  assert.equal((await api(d.url, 'POST', '/api/v1/tenants', { id }, sys)).status, 201);
  const k = await api(d.url, 'POST', `/api/v1/tenants/${id}/apikeys`, { name: 'test' }, sys);
  assert.equal(k.status, 201);
  return { authorization: `Bearer ${k.body.key as string}` };
}
