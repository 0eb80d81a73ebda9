import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createCheckers } from '../../runtime/health/checkers/index.js';
import { checkKeyOf } from '../../runtime/health/targets.js';
import { HEALTHCHECK_DEFAULTS } from '../../core/model/normalize.js';
import type { HealthCheckFields } from '../../core/model/types.js';
import type { CheckResult, CheckTarget } from '../../runtime/health/types.js';
import { LogCapture } from '../helpers/daemon.js';
import { waitUntil } from '../helpers/wait.js';

const logs = new LogCapture();
// scripts allowed from the temp directory, where the script test writes them (docs/health.md "Script checks")
const checkers = createCheckers(pino({ level: 'debug' }, logs), { scripts: { allow: true, dirs: [tmpdir()] } });

function target(ip: string, port: number, over: Partial<HealthCheckFields> = {}): CheckTarget {
  const check = { ...HEALTHCHECK_DEFAULTS, port, timeoutMs: 1000, ...over };
  return { key: `p|${ip}`, poolId: 'p', ip, port, check, checkKey: checkKeyOf(check), checkId: 'hc' };
}

async function run(t: CheckTarget): Promise<CheckResult & { elapsed: number }> {
  const start = performance.now();
  const r = await checkers[t.check.type].check(t, AbortSignal.timeout(t.check.timeoutMs));
  return { ...r, elapsed: performance.now() - start };
}

function listen<T extends TcpServer | HttpServer>(srv: T, port = 0, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, () => resolve((srv.address() as AddressInfo).port));
  });
}
const close = (srv: TcpServer | HttpServer) => new Promise<void>((r) => { (srv as HttpServer).closeAllConnections?.(); srv.close(() => r()); });

test('tcp: healthy while a listener accepts, unhealthy after it stops, healthy after it starts again', async () => {
  const srv = createTcpServer((s) => s.destroy());
  const port = await listen(srv);
  const up = await run(target('127.0.0.1', port));
  assert.equal(up.ok, true, up.detail);
  assert.ok(up.rttMs >= 0 && up.rttMs <= up.elapsed + 0.01, `the rtt is measured within the check (${up.rttMs} of ${up.elapsed} ms)`);
  await close(srv);
  const down = await run(target('127.0.0.1', port));
  assert.equal(down.ok, false);
  assert.match(down.detail, /ECONNREFUSED/);
  const again = createTcpServer((s) => s.destroy());
  await listen(again, port);
  assert.equal((await run(target('127.0.0.1', port))).ok, true);
  await close(again);
});

test('http: status and body decide; Host header is httpHost while dialling the member IP; timeout covers a stalled body', async () => {
  let status = 200;
  let body = 'all good: READY';
  const seen: { host?: string; path?: string }[] = [];
  const srv = createHttpServer((req, res) => {
    seen.push({ host: req.headers.host, path: req.url });
    if (req.url === '/stall') { res.writeHead(200); res.write('partial'); return; } // never ends
    if (req.url === '/big') {
      res.writeHead(200);
      res.write(Buffer.alloc(1024 * 1024 + 10, 'a'));
      res.end('NEEDLE');
      return;
    }
    res.writeHead(status).end(body);
  });
  const port = await listen(srv, 0, '127.0.0.2');
  const base = { type: 'http' as const, httpPath: '/hz', httpHost: 'svc.example.test', httpContains: 'READY' };
  let r = await run(target('127.0.0.2', port, base));
  assert.equal(r.ok, true, r.detail);
  assert.deepEqual(seen.at(-1), { host: 'svc.example.test', path: '/hz' });
  body = 'starting';
  r = await run(target('127.0.0.2', port, base));
  assert.equal(r.ok, false);
  assert.match(r.detail, /body lacks/);
  body = 'READY';
  status = 503;
  r = await run(target('127.0.0.2', port, base));
  assert.equal(r.ok, false);
  assert.match(r.detail, /status 503/);
  r = await run(target('127.0.0.2', port, { ...base, httpExpectedStatus: 0 }));
  assert.equal(r.ok, true, 'expected status 0 ignores the status');
  status = 200;
  r = await run(target('127.0.0.2', port, { ...base, httpPath: '/stall', timeoutMs: 300 }));
  assert.equal(r.ok, false);
  assert.equal(r.detail, 'timeout', 'the stalled body was cut by the timeout');
  assert.ok(r.elapsed >= 250, `not before the timeout (${r.elapsed} ms)`);
  r = await run(target('127.0.0.2', port, { ...base, httpPath: '/big', httpContains: 'NEEDLE' }));
  assert.equal(r.ok, false, 'a match past the first 1 MB is not read');
  r = await run(target('127.0.0.2', port, { ...base, httpPath: '/big', httpContains: 'aaaa' }));
  assert.equal(r.ok, true);
  await close(srv);
});

test('https: self-signed certificate fails verification unless insecureSkipVerify; httpHost is the SNI name', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-tls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=secure.example.test',
    '-addext', 'subjectAltName=DNS:secure.example.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  const sni: (string | false)[] = [];
  const srv = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => res.end(`host=${req.headers.host}`));
  srv.on('secureConnection', (s) => sni.push((s as unknown as { servername: string | false }).servername));
  const port = await listen(srv, 0, '127.0.0.3');
  const base = { type: 'http' as const, tls: true, httpHost: 'secure.example.test', httpContains: 'host=secure.example.test' };
  let r = await run(target('127.0.0.3', port, base));
  assert.equal(r.ok, false, 'self-signed certificate must not verify');
  assert.match(r.detail, /self[- ]signed|certificate/i);
  r = await run(target('127.0.0.3', port, { ...base, insecureSkipVerify: true }));
  assert.equal(r.ok, true, r.detail);
  assert.equal(sni.at(-1), 'secure.example.test', 'server saw httpHost as the TLS server name');
  await close(srv);
});

test('script: exit 0 healthy, exit 1 unhealthy, a hanging script is killed at the timeout; minimal env and temp file handling', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-script-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'env.txt');
  const path = join(dir, 'check.sh');
  writeFileSync(path, `#!/bin/sh\necho "$SVC_HC_IP $SVC_HC_PORT $GSLBD_TEST_INHERITED" > ${out}\nexit 0\n`);
  chmodSync(path, 0o755);
  process.env.GSLBD_TEST_INHERITED = 'inherited';
  let r = await run(target('127.0.0.9', 7777, { type: 'script', scriptPath: path }));
  assert.equal(r.ok, true, r.detail);
  assert.equal(readFileSync(out, 'utf8').trim(), '127.0.0.9 7777', 'the daemon environment is not inherited');
  r = await run(target('127.0.0.9', 7777, { type: 'script', scriptContent: '#!/bin/sh\nexit 1\n', scriptPath: path }));
  assert.equal(r.ok, false, 'scriptContent takes precedence over scriptPath');
  assert.equal(r.detail, 'exit 1');
  const before = readdirSync(tmpdir()).filter((n) => n.startsWith('gslbd-hc-')).length;
  const pidFile = join(dir, 'pid');
  r = await run(target('127.0.0.9', 7777, { type: 'script', timeoutMs: 400, scriptContent: `#!/bin/sh\nsleep 30 &\necho $! > ${pidFile}\nwait\n` }));
  assert.equal(r.ok, false);
  assert.match(r.detail, /timeout/, 'ended by the timeout, not by the script');
  const sleepPid = Number(readFileSync(pidFile, 'utf8'));
  // gone, or a zombie waiting for a reaper: either way no longer running
  const state = () => (existsSync(`/proc/${sleepPid}/stat`) ? readFileSync(`/proc/${sleepPid}/stat`, 'utf8').split(') ')[1]?.[0] : 'gone');
  await waitUntil(`the script's child (pid ${sleepPid}) killed with it`, () => ['gone', 'Z'].includes(state() ?? ''), { describe: () => `its state: ${state()}` });
  const after = readdirSync(tmpdir()).filter((n) => n.startsWith('gslbd-hc-')).length;
  assert.ok(after <= before, 'the temporary script file is removed');
});

test('webhook: POST sends {ip, port}; GET sends no body; 2xx healthy, other status or network error unhealthy', async () => {
  const got: { method?: string; body: string; type?: string }[] = [];
  let status = 204;
  const srv = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => { got.push({ method: req.method, body, type: req.headers['content-type'] }); res.writeHead(status).end(); });
  });
  const port = await listen(srv);
  const url = `http://127.0.0.1:${port}/hc`;
  let r = await run(target('127.0.0.5', 8443, { type: 'webhook', webhookURL: url }));
  assert.equal(r.ok, true, r.detail);
  assert.deepEqual(JSON.parse(got[0]!.body), { ip: '127.0.0.5', port: 8443 });
  assert.equal(got[0]!.method, 'POST');
  assert.equal(got[0]!.type, 'application/json');
  r = await run(target('127.0.0.5', 8443, { type: 'webhook', webhookURL: url, webhookMethod: 'GET' }));
  assert.equal(r.ok, true);
  assert.deepEqual([got[1]!.method, got[1]!.body], ['GET', '']);
  status = 500;
  assert.equal((await run(target('127.0.0.5', 8443, { type: 'webhook', webhookURL: url }))).ok, false);
  await close(srv);
  r = await run(target('127.0.0.5', 8443, { type: 'webhook', webhookURL: url }));
  assert.equal(r.ok, false);
});

const pingWorks = spawnSync('ping', ['-n', '-c', '1', '-W', '1', '127.0.0.1'], { stdio: 'ignore' }).status === 0;
test('icmp: echo replies from 127.0.0.1, RTT averaged', { skip: pingWorks ? false : 'ping cannot send echo requests here (no CAP_NET_RAW and no ping_group_range)' }, async () => {
  const r = await run(target('127.0.0.1', 0, { type: 'icmp', icmpCount: 3, timeoutMs: 2000 }));
  assert.equal(r.ok, true, r.detail);
  assert.equal(r.detail, '3/3 replies');
  assert.ok(r.rttMs > 0 && r.rttMs <= r.elapsed + 0.01, `the average rtt is measured within the check (${r.rttMs} of ${r.elapsed} ms)`);
});

test('icmp: without the capability every probe logs a warning and is unhealthy', async (t) => {
  // A stand-in for ping on a host where it lacks CAP_NET_RAW: it fails exactly as iputils does.
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-ping-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fake = join(dir, 'ping');
  writeFileSync(fake, '#!/bin/sh\necho "ping: socket: Operation not permitted" >&2\nexit 2\n');
  chmodSync(fake, 0o755);
  const capture = new LogCapture();
  const c = createCheckers(pino({ level: 'debug' }, capture), { pingBinary: fake });
  const tg = target('127.0.0.1', 0, { type: 'icmp' });
  for (let i = 0; i < 2; i++) {
    const r = await c.icmp.check(tg, AbortSignal.timeout(2000));
    assert.equal(r.ok, false);
    assert.match(r.detail, /capability/);
  }
  assert.equal(capture.lines.filter((l) => l.level === 40 && String(l.msg).includes('capability')).length, 2);
  assert.ok(existsSync(fake));
});
