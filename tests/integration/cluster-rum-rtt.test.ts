import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startNats, stopAllNats, waitFor } from '../helpers/nats.js';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { issueLicense } from '../../runtime/license/license.js';

// The rum step's fallback orders by the cluster-wide minimum probe RTT (gslb-api.md §4, docs/cluster.md
// "Probe RTT"): two nodes that measure different RTTs for the same members answer a subnet without
// RUM data alike, and a node whose peer is gone falls back to its own RTTs.

const daemons: TestDaemon[] = [];
after(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  await stopAllNats();
});

const X = '127.0.0.51';
const Y = '127.0.0.52';

test('two nodes with different probe RTTs answer an uncovered subnet with the same member', async () => {
  const nats = await startNats();
  const SYS = randomBytes(24).toString('hex');
  const sys = { authorization: `Bearer ${SYS}` };
  const secret = randomBytes(32).toString('hex');
  const licenseKey = await issueLicense({ tier: 'pro', licensee: 'tests', expiresAt: Math.floor(Date.now() / 1000) + 86_400 }, secret);
  const node = async (id: string) => {
    const d = await startTestDaemon({
      node: { id }, cluster: { id: 'rtt' }, license: { secret, licenseKey },
      dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' },
      state: { enableConfigSync: true, heartbeatInterval: '300ms', nats: { servers: [nats.url] } },
    } as never, { GSLB_API_KEY: SYS });
    daemons.push(d);
    await waitFor(`${id} connected`, () => d.core.ports.cluster!.connected(), 10_000);
    return d;
  };
  const a = await node('a');
  const b = await node('b');
  await waitFor('a and b see each other', () => a.core.ports.cluster!.live.isLive('b') && b.core.ports.cluster!.live.isLive('a'), 20_000, 50);
  // a pool without a health check: no probe runs, the RTTs below are the only ones
  const poolId = (await api(a.url, 'POST', '/api/v1/pools', { name: 'web' }, sys)).body.id as string;
  for (const ip of [X, Y]) await api(a.url, 'POST', `/api/v1/pools/${poolId}/members`, { ipAddress: ip, port: 80, rumUrl: `http://${ip}/rum` }, sys);
  assert.equal((await api(a.url, 'POST', '/api/v1/services', { name: 'www', domain: 'www.example.test.', poolId, chain: ['rum'] }, sys)).status, 201);
  await waitFor('config on b', async () => (await api(b.url, 'GET', '/api/v1/rum/config?domain=www.example.test')).body.targets?.length === 2, 20_000, 100);

  // each node's own probes, as the health checker reports them: a finds X faster, b finds Y faster
  const probe = (d: TestDaemon, ip: string, rttMs: number) => {
    const node = d.core.config.node.id;
    const at = Date.now();
    d.core.health.record(poolId, ip, true, 1, at, rttMs, node);
    d.core.bus.emit('health_transition', { poolId, ipAddress: ip, healthy: true, score: 1, timestamp: at, rttMs, node });
  };
  probe(a, X, 10); probe(a, Y, 40);
  probe(b, X, 60); probe(b, Y, 30);

  // no RUM sample for this subnet: the fallback by probe RTT; the cluster-wide minimum is X's 10 ms (a's)
  const answer = async (d: TestDaemon) => (await dig(d.ports.dnsPort as number, ['www.example.test', 'A', '+subnet=198.51.100.0/24'])).answers;
  for (const d of [a, b]) await waitFor(`${d.core.config.node.id} answers X`, async () => (await answer(d))[0] === X, 20_000, 100, async () => answer(d));
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await answer(a), [X]);
    assert.deepEqual(await answer(b), [X]);
  }

  // a leaves: its reports stop counting, and b orders by its own RTTs again
  await a.stop();
  daemons.splice(daemons.indexOf(a), 1);
  await waitFor('b answers Y alone', async () => (await answer(b))[0] === Y, 20_000, 100, async () => answer(b));
});
