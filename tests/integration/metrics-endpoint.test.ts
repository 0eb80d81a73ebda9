import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type AddressInfo } from 'node:net';
import { startTestDaemon, api } from '../helpers/daemon.js';

async function scrape(port: number, path = '/metrics') {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The value of one sample line, e.g. `gslbd_health_endpoints{pool="x",…}`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

test('metrics: /metrics on metrics.port serves process, health endpoint and failover histogram series', async (t) => {
  const listener: Server = await new Promise((r) => { const s = createServer((c) => c.destroy()); s.listen(0, '127.0.0.71', () => r(s)); });
  const port = (listener.address() as AddressInfo).port;
  const d = await startTestDaemon({ metrics: { enablePrometheus: true, listenAddr: '127.0.0.1', port: 0 } } as never);
  t.after(async () => { await d.stop(); if (listener.listening) await new Promise((r) => listener.close(r)); });
  const mport = d.ports.metricsPort as number;
  assert.ok(Number.isInteger(mport) && mport > 0, 'bound port published');

  let m = await scrape(mport);
  assert.equal(m.status, 200);
  assert.match(m.type, /text\/plain/);
  assert.match(m.text, /^gslbd_process_cpu_user_seconds_total\{cluster="[^"]*",node="test-node"\} /m);
  assert.match(m.text, /# TYPE gslbd_health_failover_detection_seconds histogram/);
  assert.equal(sample(m.text, 'gslbd_health_failover_detection_seconds_count', { direction: 'down' }), 0);

  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'm' })).body;
  await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '127.0.0.71', port: 80 });
  await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '127.0.0.72', port: 80 });
  await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'tcp', port, intervalMs: 100, timeoutMs: 80 });
  const end = Date.now() + 3000;
  do {
    await new Promise((r) => setTimeout(r, 50));
    m = await scrape(mport);
    // the down flip of 127.0.0.72 and a first successful probe of 127.0.0.71 may land in either order
  } while ((sample(m.text, 'gslbd_health_failover_detection_seconds_count', { direction: 'down' }) !== 1
    || (sample(m.text, 'gslbd_health_probes_total', { type: 'tcp', result: 'ok' }) ?? 0) < 1) && Date.now() < end);
  assert.equal(sample(m.text, 'gslbd_health_failover_detection_seconds_count', { direction: 'down' }), 1, '127.0.0.72 has no listener');
  assert.equal(sample(m.text, 'gslbd_health_endpoints', { pool: pool.id }), 2);
  assert.equal(sample(m.text, 'gslbd_health_endpoints_healthy', { pool: pool.id }), 1);
  assert.ok((sample(m.text, 'gslbd_health_probes_total', { type: 'tcp', result: 'ok' }) ?? 0) >= 1);
  assert.ok(sample(m.text, 'gslbd_health_failover_detection_seconds_bucket', { direction: 'down', le: '+Inf' }) === 1);

  assert.equal((await scrape(mport, '/other')).status, 404);
});

test('metrics: no listener unless enablePrometheus', async (t) => {
  const d = await startTestDaemon();
  t.after(() => d.stop());
  assert.equal(d.ports.metricsPort, undefined);
});
