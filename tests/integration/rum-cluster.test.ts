import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startNats, stopAllNats, waitFor } from '../helpers/nats.js';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { issueLicense } from '../../runtime/license/license.js';

// RUM across nodes (docs/rum.md "Cluster"): a beacon taken by node A reaches node B over
// `svc.rum.<cluster>` on a real nats-server, and B's DNS answers that subnet with the fastest member.

const daemons: TestDaemon[] = [];
after(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  await stopAllNats();
});

test('samples accepted by one node steer the rum step on another', async () => {
  const nats = await startNats();
  const SYS = randomBytes(24).toString('hex');
  const sys = { authorization: `Bearer ${SYS}` };
  const secret = randomBytes(32).toString('hex');
  const licenseKey = await issueLicense({ tier: 'pro', licensee: 'tests', expiresAt: Math.floor(Date.now() / 1000) + 86_400 }, secret);
  const node = async (id: string) => {
    const d = await startTestDaemon({
      node: { id }, cluster: { id: 'rum' }, license: { secret, licenseKey },
      dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' },
      state: { enableConfigSync: true, heartbeatInterval: '300ms', nats: { servers: [nats.url] } },
    } as never, { GSLB_API_KEY: SYS });
    daemons.push(d);
    await waitFor(`${id} connected`, () => d.core.ports.cluster!.connected(), 10_000);
    return d;
  };
  const a = await node('a');
  const b = await node('b');
  const poolId = (await api(a.url, 'POST', '/api/v1/pools', { name: 'web' }, sys)).body.id as string;
  for (const ip of ['127.0.0.41', '127.0.0.42']) await api(a.url, 'POST', `/api/v1/pools/${poolId}/members`, { ipAddress: ip, port: 80, rumUrl: `http://${ip}/rum` }, sys);
  assert.equal((await api(a.url, 'POST', '/api/v1/services', { name: 'www', domain: 'www.example.test.', poolId, chain: ['rum'] }, sys)).status, 201);
  await waitFor('config on b', async () => (await api(b.url, 'GET', '/api/v1/rum/config?domain=www.example.test')).body.targets?.length === 2, 10_000, 100);

  const beacon = await api(a.url, 'POST', '/api/v1/rum/ingest', { domain: 'www.example.test', samples: [{ ip: '127.0.0.41', ms: 250 }, { ip: '127.0.0.42', ms: 8 }] });
  assert.equal(beacon.status, 202);
  const onB = () => dig(b.ports.dnsPort as number, ['www.example.test', 'A', '+subnet=127.0.0.0/24']);
  await waitFor('b answers from a\'s samples', async () => (await onB()).answers[0] === '127.0.0.42', 10_000, 100);
  for (let i = 0; i < 4; i++) assert.deepEqual((await onB()).answers, ['127.0.0.42']);
  const status = (await api(b.url, 'GET', '/api/v1/rum/status', undefined, sys)).body;
  assert.equal(status.subnets, 1);
  assert.equal(status.measurements, 2);
});
