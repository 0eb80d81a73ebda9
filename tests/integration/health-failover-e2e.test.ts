import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { WebSocket } from 'ws';
import { startTestDaemon, api } from '../helpers/daemon.js';

const INTERVAL = 500;
const TIMEOUT = 200;

/** One `dig +short` A query against the daemon; resolves with the answer lines. */
function dig(port: number, name: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile('dig', ['@127.0.0.1', '-p', String(port), name, 'A', '+short', '+time=1', '+tries=1'], { timeout: 3000 }, (err, stdout) => {
      if (err) reject(err);
      else resolve(stdout.split('\n').map((l) => l.trim()).filter(Boolean));
    });
  });
}

function httpMember(host: string, port: number): Promise<Server> {
  const srv = createServer((_req, res) => res.end('ok'));
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, () => resolve(srv));
  });
}
const stop = (s: Server) => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); });

/** Polls dig until the first answer is `want`; returns ms from `since` to the end of that query. */
async function digUntil(port: number, name: string, want: string, since: number, limitMs: number): Promise<number> {
  for (let i = 0; i < 400; i++) {
    const ans = await dig(port, name);
    if (ans[0] === want) return Date.now() - since;
    if (Date.now() - since > limitMs) throw new Error(`dig still answers ${ans.join(',')} after ${Date.now() - since} ms, want ${want}`);
  }
  throw new Error('dig loop exhausted');
}

test('e2e: failover service follows HTTP health of its members; WS and /metrics see the flips', async (t) => {
  const primary = await httpMember('127.0.0.81', 0);
  const port = (primary.address() as AddressInfo).port;
  const secondary = await httpMember('127.0.0.82', port);
  let restarted: Server | undefined;
  const d = await startTestDaemon({ metrics: { enablePrometheus: true, listenAddr: '127.0.0.1', port: 0 } } as never);
  t.after(async () => {
    await d.stop();
    for (const s of [primary, secondary, restarted]) if (s?.listening) await stop(s);
  });
  const dnsPort = d.ports.dnsPort as number;
  assert.ok(dnsPort > 0, 'the DNS part publishes its port');
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'fo' })).body;
  await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '127.0.0.81', port, priority: 1 });
  await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '127.0.0.82', port, priority: 2 });
  const svc = await api(d.url, 'POST', '/api/v1/services', { name: 'fo', domain: 'fo.example.test.', algorithm: 'failover', ttl: 5, poolId: pool.id });
  assert.equal(svc.status, 201);
  await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'http', port, httpPath: '/', intervalMs: INTERVAL, timeoutMs: TIMEOUT });

  const tok = (await api(d.url, 'GET', '/api/v1/ws/token')).body;
  const ws = new WebSocket(`${d.url.replace('http', 'ws')}/api/v1/ws?token=${tok.token}`);
  t.after(() => ws.terminate());
  const healthMsgs: { ipAddress: string; healthy: boolean }[] = [];
  ws.on('message', (raw) => { const m = JSON.parse(String(raw)); if (m.type === 'health_update') healthMsgs.push(m.payload); });
  await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });

  // both probed healthy: the primary answers
  const t0 = Date.now();
  while (!(d.core.health.get(pool.id, '127.0.0.81')?.lastChecked && d.core.health.get(pool.id, '127.0.0.82')?.lastChecked)) {
    if (Date.now() - t0 > 3000) throw new Error('no first probes');
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(await dig(dnsPort, 'fo.example.test'), ['127.0.0.81']);

  const stoppedAt = Date.now();
  await stop(primary);
  const down = await digUntil(dnsPort, 'fo.example.test', '127.0.0.82', stoppedAt, 5000);
  assert.ok(down <= INTERVAL + TIMEOUT + 100, `secondary answered ${down} ms after the primary stopped (limit ${INTERVAL + TIMEOUT + 100})`);

  const startedAt = Date.now();
  restarted = await httpMember('127.0.0.81', port);
  const up = await digUntil(dnsPort, 'fo.example.test', '127.0.0.81', startedAt, 5000);
  assert.ok(up <= INTERVAL + TIMEOUT + 100, `primary answered again ${up} ms after it restarted (failback)`);

  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(healthMsgs.map((m) => [m.ipAddress, m.healthy]), [['127.0.0.81', false], ['127.0.0.81', true]]);
  const metrics = await (await fetch(`http://127.0.0.1:${d.ports.metricsPort as number}/metrics`)).text();
  assert.match(metrics, /gslbd_health_failover_detection_seconds_count\{[^}]*direction="down"[^}]*\} 1/);
  assert.match(metrics, /gslbd_health_failover_detection_seconds_count\{[^}]*direction="up"[^}]*\} 1/);
  console.log(`failover: down ${down} ms, up ${up} ms (interval ${INTERVAL}, timeout ${TIMEOUT})`);
});
