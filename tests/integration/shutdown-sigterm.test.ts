/**
 * SIGTERM of a busy gslbd (docs/architecture.md "Shutdown"): the daemon runs as its own process
 * (node itself, no wrapper), with a BGP session to a real BIRD, a connection to its BGP port from
 * an address that is not a peer and never closes, a three-server NATS cluster, health checks
 * running, and a form delivery in flight to a webhook receiver that never answers. After SIGTERM
 * the process exits with 0 and no part left behind, every port it listened on is closed, and BIRD
 * holds none of its routes.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, freePort, tcpListening, udpBound, waitFor } from '../helpers/proc.js';
import { startBird, type Bird } from '../helpers/bird.js';
import { startNatsCluster, stopAllNats } from '../helpers/nats.js';
import { startHttpMember, stopHttpMember } from '../helpers/http-member.js';

const NODE_PREFIX = '203.0.113.0/24';

/**
 * Connects to `port` from 127.0.0.2 (not a configured BGP peer) and never closes its side: it
 * reads gslbd's refusal (a NOTIFICATION, then gslbd's FIN) and keeps the connection half open.
 */
async function holdStrayConnection(port: number): Promise<Socket> {
  const s = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2', allowHalfOpen: true });
  s.on('error', () => {});
  await new Promise<void>((resolve, reject) => { s.once('data', () => resolve()); s.once('close', () => reject(new Error('stray connection closed before any data'))); });
  return s;
}

/** A webhook receiver that takes each request and never answers: a delivery stays in flight. */
async function startSilentWebhook(): Promise<{ server: Server; url: string; received: IncomingMessage[] }> {
  const received: IncomingMessage[] = [];
  const server = createHttpServer((req) => { received.push(req); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, received };
}

async function json(url: string, method = 'GET', body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  try { return { status: res.status, body: text ? JSON.parse(text) : undefined }; } catch { return { status: res.status, body: text }; }
}

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) { try { await c(); } catch { /* best effort */ } }
  await stopAllNats();
});

test('SIGTERM with a BGP session, a NATS cluster, health checks and a form delivery in flight: the process exits 0 and every port closes', async () => {
  const nats = await startNatsCluster(3);
  const birdPort = await freePort();
  const ports = { api: await freePort(), dns: await freePort(), metrics: await freePort(), bgp: await freePort() };
  const bird: Bird = await startBird({ asn: 65020, port: birdPort, peerAsn: 65010, peerPort: ports.bgp });
  cleanups.push(() => bird.dispose());
  const member = await startHttpMember('127.0.0.31', 0);
  cleanups.push(() => stopHttpMember(member));
  const hook = await startSilentWebhook();
  cleanups.push(() => { hook.server.closeAllConnections(); hook.server.close(); });

  const dir = mkdtempSync(join(tmpdir(), 'gslbd-shutdown-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const config = {
    cluster: { id: 'shutdown-test' },
    node: { id: 'sd1' },
    database: { path: join(dir, 'gslbd.db') },
    api: { enabled: true, listenAddr: '127.0.0.1', port: ports.api },
    dns: { listenAddr: '127.0.0.1', port: ports.dns },
    metrics: { enablePrometheus: true, listenAddr: '127.0.0.1', port: ports.metrics },
    logging: { format: 'json', level: 'debug' },
    state: { nats: { servers: nats.map((s) => s.url) } },
    bgp: {
      enabled: true, localASN: 65010, routerID: '192.0.2.1', listenAddr: '127.0.0.1', listenPort: ports.bgp, holdTime: '9s', keepAliveTime: '3s',
      peers: [{ remoteASN: 65020, remoteAddr: '127.0.0.1', remotePort: birdPort }],
      nodePrefixes: [NODE_PREFIX],
    },
    // the receiver never answers: without a bound at shutdown the delivery would wait the whole deadline
    forms: { deliveries: { pollIntervalMs: 50, timeoutMs: 120_000, allowPrivateTargets: ['127.0.0.0/8'] } },
  };
  writeFileSync(join(dir, 'config.yaml'), JSON.stringify(config, null, 2));

  // node itself, not a wrapper: the PID signalled is the daemon's (its log lines carry it)
  const p: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'runtime/main.ts', '--config', join(dir, 'config.yaml')], {
    env: childEnv({ GSLB_API_KEY: '' }), stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  p.stdout!.on('data', (c) => { out += c; });
  p.stderr!.on('data', (c) => { out += c; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => p.once('exit', (code, signal) => r({ code, signal })));
  cleanups.push(async () => { if (p.exitCode === null && p.signalCode === null) { p.kill('SIGKILL'); await exited; } });
  const lines = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const explain = (e: unknown) => new Error(`${String(e)}\n--- gslbd output ---\n${out.slice(-6000)}\n--- bird ---\n${bird.protocol()}`);

  const api = `http://127.0.0.1:${ports.api}`;
  await waitFor(async () => (await json(`${api}/api/v1/health`)).body?.status === 'ok', 90_000).catch((e) => { throw explain(e); });
  assert.ok(lines().length > 0 && lines().every((l) => l.pid === p.pid), 'every log line comes from the process the test signals');
  await waitFor(async () => (await json(`${api}/api/v1/cluster`)).body?.connected === true, 30_000).catch((e) => { throw explain(e); });
  await waitFor(() => bird.routes().includes(NODE_PREFIX), 30_000).catch((e) => { throw explain(e); });

  // health checks running against a member
  const pool = (await json(`${api}/api/v1/pools`, 'POST', { name: 'web' })).body as { id: string };
  const memberPort = (member.address() as { port: number }).port;
  assert.equal((await json(`${api}/api/v1/pools/${pool.id}/members`, 'POST', { ipAddress: '127.0.0.31', port: memberPort })).status, 201);
  assert.equal((await json(`${api}/api/v1/pools/${pool.id}/healthcheck`, 'PUT', { type: 'http', port: memberPort, httpPath: '/', intervalMs: 200, timeoutMs: 150 })).status, 200);

  // a form whose webhook action is in flight when the signal comes
  const key = (await json(`${api}/api/v1/apikeys`, 'POST', { name: 'site', scopes: ['forms:read', 'forms:write'] })).body.key as string;
  const auth = { authorization: `Bearer ${key}` };
  const form = (await json(`${api}/public/v1/form`, 'POST', { name: 'Contact' }, auth)).body.id as string;
  assert.equal((await json(`${api}/public/v1/form/${form}/action`, 'POST', { form_id: form, type: 'webhook', config: { url: hook.url } }, auth)).status, 201);
  assert.equal((await json(`${api}/f/${form}`, 'POST', { email: 'a@example.com', message: 'hello' }, { accept: 'application/json' })).status, 200);
  await waitFor(() => hook.received.length === 1, 20_000).catch((e) => { throw explain(e); });

  // a connection to the BGP port from an address that is not a peer, whose far end never closes
  const stray = await holdStrayConnection(ports.bgp);
  cleanups.push(() => { stray.destroy(); });

  for (const [name, port] of Object.entries(ports)) assert.ok(await tcpListening(port), `${name} listens before the signal`);
  assert.ok(await udpBound(ports.dns), 'dns udp is bound before the signal');

  assert.ok(p.kill('SIGTERM'));
  // no time bound: the exit event itself is the condition (the test runner's own timeout is the ceiling)
  const { code, signal } = await exited;
  assert.equal(signal, null, `exited by signal ${String(signal)}\n${out.slice(-6000)}`);
  assert.equal(code, 0, out.slice(-6000));
  for (const [name, port] of Object.entries(ports)) assert.equal(await tcpListening(port), false, `${name} port ${port} is closed after exit`);
  assert.equal(await udpBound(ports.dns), false, 'dns udp port is released after exit');
  assert.ok(lines().some((l) => l.msg === 'shutting down'));
  assert.ok(!lines().some((l) => l.msg === 'shutdown: parts did not stop in time'), 'every part stopped within its bound');
  assert.ok(lines().some((l) => l.msg === 'stopped'));
  assert.ok(lines().some((l) => l.msg === 'form deliveries in flight aborted at shutdown; they are sent again at the next start'), 'the delivery in flight was cut off');
  await waitFor(() => bird.routes().length === 0, 10_000);
  assert.match(bird.log(), /Received: Administrative shutdown/);
});
