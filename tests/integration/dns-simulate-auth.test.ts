import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestDaemon } from '../helpers/daemon.js';

test('POST /simulate needs pools:read: 401 without credentials, 200 with the system key', async (t) => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'sim.test' } as never, loadbalancer: { endpoints: ['192.0.2.7'] } as never }, { GSLB_API_KEY: 'sim-key' });
  t.after(() => d.stop());
  const body = { name: 'sim.test', type: 'A', clientIp: '203.0.113.9' };
  const anon = await api(d.url, 'POST', '/api/v1/simulate', body);
  assert.equal(anon.status, 401);
  assert.equal(typeof anon.body.error, 'string');
  const ok = await api(d.url, 'POST', '/api/v1/simulate', body, { authorization: 'Bearer sim-key' });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.rcode, 'NOERROR');
  assert.deepEqual(ok.body.answers.map((a: { data: string }) => a.data), ['192.0.2.7'], 'static endpoint at the apex');
  assert.equal(ok.body.steps[0].step, 'health');
});
