import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type AddressInfo } from 'node:net';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import type { HealthTransition } from '../../core/events/bus.js';
import { waitUntil } from '../helpers/wait.js';

function listenTcp(host: string, port = 0): Promise<Server> {
  const srv = createServer((s) => s.destroy());
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, () => resolve(srv));
  });
}
const portOf = (s: Server) => (s.address() as AddressInfo).port;
const closeTcp = (s: Server) => new Promise<void>((r) => s.close(() => r()));

function storedRow(d: TestDaemon, poolId: string, ip: string) {
  return d.core.db.prepare('SELECT healthy, score, last_checked FROM health_status WHERE pool_id = ? AND ip_address = ?').get(poolId, ip) as
    { healthy: number; score: number; last_checked: number } | undefined;
}

async function poolWithMembers(d: TestDaemon, ips: string[]) {
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'web' })).body as { id: string };
  const members: { id: string; ipAddress: string }[] = [];
  for (const ip of ips) members.push((await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: ip, port: 80 })).body);
  return { pool, members };
}

test('daemon: TCP members flip on listener stop/start; storage written only on flips; events in order', async (t) => {
  const a = await listenTcp('127.0.0.11');
  const port = portOf(a);
  let b = await listenTcp('127.0.0.12', port);
  const d = await startTestDaemon();
  t.after(async () => { await d.stop(); await closeTcp(a); if (b.listening) await closeTcp(b); });
  // the native TCP probe path (docs/health.md "TCP probe path"), unless forced off for a net run
  assert.equal(d.core.ports.tcpProbePath, process.env.GSLBD_TCP_PROBE === 'net' ? 'net' : 'native');
  const transitions: HealthTransition[] = [];
  d.core.bus.on('health_transition', (e) => transitions.push(e));
  const { pool, members } = await poolWithMembers(d, ['127.0.0.11', '127.0.0.12']);
  const hc = await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'tcp', port, intervalMs: 200, timeoutMs: 100 });
  assert.equal(hc.status, 200);
  // optimistic start: healthy before the first probe; the first probe syncs storage
  await waitUntil('first probe writes storage', () => storedRow(d, pool.id, '127.0.0.11') && storedRow(d, pool.id, '127.0.0.12'));
  assert.equal(storedRow(d, pool.id, '127.0.0.12')!.healthy, 1);
  let st = await api(d.url, 'GET', `/api/v1/pools/${pool.id}/status`);
  assert.deepEqual(st.body.map((m: { healthy: boolean }) => m.healthy), [true, true]);

  // the next probe finds the port closed (refused at once, fall 1): how soon is bench:health's figure
  await closeTcp(b);
  await waitUntil('member 2 unhealthy', () => !d.core.health.isHealthy(pool.id, '127.0.0.12'));
  const down = storedRow(d, pool.id, '127.0.0.12')!;
  assert.equal(down.healthy, 0);
  assert.deepEqual(transitions.map((e) => [e.ipAddress, e.healthy]), [['127.0.0.12', false]]);
  st = await api(d.url, 'GET', `/api/v1/members/${members[1]!.id}/status`);
  assert.deepEqual([st.body.healthy, st.body.score], [false, 0]);

  // steady state: probes continue (live lastChecked advances) but storage is not rewritten
  const liveBefore = d.core.health.get(pool.id, '127.0.0.12')!.lastChecked;
  await waitUntil('more probes', () => d.core.health.get(pool.id, '127.0.0.12')!.lastChecked >= liveBefore + 400);
  assert.equal(storedRow(d, pool.id, '127.0.0.12')!.last_checked, down.last_checked, 'no write without a flip');
  assert.equal(storedRow(d, pool.id, '127.0.0.11')!.last_checked <= liveBefore, true, 'healthy member not rewritten either');

  b = await listenTcp('127.0.0.12', port);
  await waitUntil('member 2 healthy again', () => d.core.health.isHealthy(pool.id, '127.0.0.12'));
  assert.equal(storedRow(d, pool.id, '127.0.0.12')!.healthy, 1);
  assert.deepEqual(transitions.map((e) => [e.ipAddress, e.healthy]), [['127.0.0.12', false], ['127.0.0.12', true]]);
  assert.ok(transitions.every((e) => e.node === 'test-node' && e.poolId === pool.id));
});

test('daemon: check update restarts checkers; disabled and deleted members stop being probed and lose their entries', async (t) => {
  const a = await listenTcp('127.0.0.21');
  const port = portOf(a);
  const d = await startTestDaemon();
  t.after(async () => { await d.stop(); await closeTcp(a); });
  const { pool, members } = await poolWithMembers(d, ['127.0.0.21', '127.0.0.22']); // .22 has no listener
  await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'tcp', port, intervalMs: 150, timeoutMs: 100 });
  await waitUntil('member .22 unhealthy', () => !d.core.health.isHealthy(pool.id, '127.0.0.22'));

  // updating the check restarts: optimistic healthy at once, then the first probe decides again
  const transitions: HealthTransition[] = [];
  d.core.bus.on('health_transition', (e) => transitions.push(e));
  await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'tcp', port, intervalMs: 150, timeoutMs: 120 });
  assert.equal(d.core.health.isHealthy(pool.id, '127.0.0.22'), true, 'restarted checker starts optimistic');
  await waitUntil('member .22 unhealthy after restart', () => !d.core.health.isHealthy(pool.id, '127.0.0.22'));
  assert.deepEqual(transitions.map((e) => [e.ipAddress, e.healthy]), [['127.0.0.22', false]]);

  // disabling a member: no more probes, entry gone from the view and storage
  await api(d.url, 'PUT', `/api/v1/members/${members[1]!.id}`, { enabled: false });
  assert.equal(d.core.health.get(pool.id, '127.0.0.22'), undefined);
  assert.equal(storedRow(d, pool.id, '127.0.0.22'), undefined);
  const probed = () => [...(d.core.ports.health as { scheduler: { targets(): Iterable<{ ip: string }> } }).scheduler.targets()].map((x) => x.ip);
  assert.deepEqual(probed(), ['127.0.0.21']);

  // deleting a member drops it in the same turn as the API write
  const del = await api(d.url, 'DELETE', `/api/v1/members/${members[0]!.id}`);
  assert.equal(del.status, 204);
  assert.equal(d.core.health.get(pool.id, '127.0.0.21'), undefined);
  assert.equal(storedRow(d, pool.id, '127.0.0.21'), undefined);
  assert.deepEqual(probed(), []);

  // deleting the check: nothing probed, members count as healthy
  await api(d.url, 'PUT', `/api/v1/members/${members[1]!.id}`, { enabled: true });
  assert.deepEqual(probed(), ['127.0.0.22']);
  await api(d.url, 'DELETE', `/api/v1/pools/${pool.id}/healthcheck`);
  assert.deepEqual(probed(), []);
  assert.equal(d.core.health.isHealthy(pool.id, '127.0.0.22'), true);
});

test('daemon: scoreWindow scores over the last N probes and stays healthy while the score is above 0', async (t) => {
  const a = await listenTcp('127.0.0.31');
  const port = portOf(a);
  const d = await startTestDaemon();
  t.after(async () => { await d.stop(); if (a.listening) await closeTcp(a); });
  const { pool, members } = await poolWithMembers(d, ['127.0.0.31']);
  await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'tcp', port, intervalMs: 100, timeoutMs: 80, scoreWindow: 4 });
  await waitUntil('first probe', () => (d.core.health.get(pool.id, '127.0.0.31')?.lastChecked ?? 0) > 0);
  await closeTcp(a);
  const seen = new Set<number>();
  await waitUntil('score reaches 0', () => {
    const e = d.core.health.get(pool.id, '127.0.0.31')!;
    if (e.healthy) seen.add(e.score);
    return !e.healthy;
  });
  assert.ok([...seen].some((s) => s > 0 && s < 1), `partial scores seen while healthy: ${[...seen]}`);
  const st = await api(d.url, 'GET', `/api/v1/members/${members[0]!.id}/status`);
  assert.deepEqual([st.body.healthy, st.body.score], [false, 0]);
});

test('daemon: static endpoints are probed under pool "static" only when health.enabled', async (t) => {
  const a = await listenTcp('127.0.0.41');
  const port = portOf(a);
  const d = await startTestDaemon({
    loadbalancer: { endpoints: ['127.0.0.41', '127.0.0.42'] },
    health: { enabled: true, type: 'tcp', port, checkinterval: '100ms', timeout: '80ms' },
  } as never);
  t.after(async () => { await d.stop(); await closeTcp(a); });
  await waitUntil('static .42 unhealthy', () => d.core.health.get('static', '127.0.0.42')?.healthy === false);
  assert.equal(d.core.health.isHealthy('static', '127.0.0.41'), true);
  const off = await startTestDaemon({ loadbalancer: { endpoints: ['127.0.0.42'] }, health: { enabled: false, port } } as never);
  t.after(() => off.stop());
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(off.core.health.get('static', '127.0.0.42'), undefined, 'no probes when disabled');
  assert.equal(off.core.health.isHealthy('static', '127.0.0.42'), true);
});

test('daemon: insecureSkipVerify logs a warning when the check starts', async (t) => {
  const d = await startTestDaemon();
  t.after(() => d.stop());
  const { pool } = await poolWithMembers(d, ['127.0.0.51']);
  await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'http', tls: true, insecureSkipVerify: true, port: 1 });
  assert.ok(d.logs.lines.some((l) => l.level === 40 && String(l.msg).includes('insecureSkipVerify')));
});
