import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dig } from '../helpers/dns-tools.js';
import { freePort, runEntry, spawnEntry, waitFor } from '../helpers/proc.js';

// `gslbd --demo` as a user runs it (a real process, real flags), on addresses of its own so it
// never meets the README test's 127.0.0.10/.11:8081: a backend stopped over REST leaves the DNS
// answer within one check interval plus the timeout, and comes back once started.

const INTERVAL_MS = 1000;
const TIMEOUT_MS = 500;
/** scheduling slack on a loaded machine: probe jitter, event-loop delay, one dig round trip */
const MARGIN_MS = 3000;
const SYS = randomBytes(24).toString('hex');

async function call(url: string, method: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { method, headers });
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

/** Polls DNS until the sorted answer equals `want`; returns the milliseconds it took. */
async function answersBecome(dnsPort: number, want: string[], boundMs: number): Promise<number> {
  const t0 = Date.now();
  let last: string[] = [];
  await waitFor(async () => {
    last = [...(await dig(dnsPort, ['gslb.demo.test', 'A'])).answers].sort();
    return JSON.stringify(last) === JSON.stringify(want);
  }, boundMs + 5000, 100).catch((err) => { throw new Error(`answer stayed ${JSON.stringify(last)}: ${String(err)}`); });
  return Date.now() - t0;
}

test('gslbd --demo: backends answer, a stopped one fails over within interval + timeout, and returns', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-demo-'));
  const [backendPort, apiPort, dnsPort] = [await freePort(), await freePort(), await freePort()];
  const url = `http://127.0.0.1:${apiPort}`;
  const backends = `127.0.0.20:${backendPort},127.0.0.21:${backendPort}`;
  const cfg = join(dir, 'gslbd.yaml');
  writeFileSync(cfg, [
    `dns: { listenAddr: 127.0.0.1, port: ${dnsPort}, domain: gslb.demo.test. }`,
    `database: { path: ${join(dir, 'gslbd.db')} }`,
    `api: { enabled: true, listenAddr: 127.0.0.1, port: ${apiPort} }`,
    'loadbalancer: { algorithm: round-robin, endpoints: [127.0.0.20, 127.0.0.21] }',
    `health: { enabled: true, type: http, port: ${backendPort}, checkinterval: ${INTERVAL_MS}ms, timeout: ${TIMEOUT_MS}ms }`,
    'logging: { format: json, level: info }',
  ].join('\n'));

  // nothing listens yet: `gslbctl wait` gives up with 3
  // (on a loaded machine the first probe may not even complete its refused connect within the
  // timeout: then the reason is "no answer"; either way it is unreachable, exit 3)
  const early = await runEntry('gslbctl', ['wait', '--ready', '--timeout', '3s', '--server', url]);
  assert.equal(early.code, 3, early.stderr);
  assert.match(early.stderr, /not ready: .* \(unreachable: (ECONNREFUSED|no answer)\)/);

  const p = spawnEntry('gslbd', ['--demo-backends', backends, '--config', cfg], { GSLB_API_KEY: SYS });
  let out = '';
  p.stdout!.on('data', (d) => { out += d; });
  p.stderr!.on('data', (d) => { out += d; });
  const lines = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  try {
    const ready = await runEntry('gslbctl', ['wait', '--ready', '--timeout', '60s', '--server', url], {}, 70_000);
    assert.equal(ready.code, 0, `${ready.stderr}\n${out}`);
    assert.match(ready.stdout, /^ready: http:\/\/127\.0\.0\.1:\d+ \(after [\d.]+ s\)/);
    for (const [name, ip] of [['demo-1', '127.0.0.20'], ['demo-2', '127.0.0.21']] as const) {
      const res = await fetch(`http://${ip}:${backendPort}/`);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), `${name} at ${ip}:${backendPort}\n`);
      assert.ok(lines().some((l) => l.msg === 'listening' && l.listener === `demo ${name}` && l.address === `${ip}:${backendPort}`), `listener ${name}`);
    }
    await answersBecome(dnsPort, ['127.0.0.20', '127.0.0.21'], 0);

    // dev mode or the system key only: no credentials 401, a tenant key 403, an unknown name 404
    const stopPath = '/api/v1/demo/backends/demo-1/stop';
    const sys = { authorization: `Bearer ${SYS}` };
    assert.equal((await call(url, 'POST', stopPath)).status, 401);
    const tenantKey = await fetch(`${url}/api/v1/tenants/default/apikeys`, { method: 'POST', headers: { ...sys, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'demo-test' }) }).then((r) => r.json() as Promise<{ key: string }>);
    const refused = await call(url, 'POST', stopPath, { authorization: `Bearer ${tenantKey.key}` });
    assert.equal(refused.status, 403);
    assert.equal(typeof refused.body.error, 'string');
    const unknown = await call(url, 'POST', '/api/v1/demo/backends/demo-9/stop', sys);
    assert.equal(unknown.status, 404);
    assert.match(String(unknown.body.error), /demo-1, demo-2/);
    assert.equal((await fetch(`http://127.0.0.20:${backendPort}/`)).status, 200, 'refused calls changed nothing');

    const stopped = await call(url, 'POST', stopPath, sys);
    assert.equal(stopped.status, 200);
    assert.deepEqual(stopped.body, { name: 'demo-1', address: `127.0.0.20:${backendPort}`, running: false });
    const down = await answersBecome(dnsPort, ['127.0.0.21'], INTERVAL_MS + TIMEOUT_MS + MARGIN_MS);
    assert.ok(down <= INTERVAL_MS + TIMEOUT_MS + MARGIN_MS, `failover took ${down} ms`);
    await assert.rejects(fetch(`http://127.0.0.20:${backendPort}/`), 'a stopped backend refuses connections');
    const flip = lines().find((l) => l.msg === 'health flip' && l.to === 'unhealthy');
    assert.ok(flip, out);
    assert.equal(flip.member, `127.0.0.20:${backendPort}`);
    // refused, or reset when the stop closed a connection a probe had just made
    assert.match(String(flip.detail), /ECONNREFUSED|ECONNRESET/);
    assert.equal((await call(url, 'POST', stopPath, sys)).body.running, false, 'stopping twice is a no-op');

    const started = await call(url, 'POST', '/api/v1/demo/backends/demo-1/start', sys);
    assert.deepEqual(started.body, { name: 'demo-1', address: `127.0.0.20:${backendPort}`, running: true });
    const up = await answersBecome(dnsPort, ['127.0.0.20', '127.0.0.21'], INTERVAL_MS + TIMEOUT_MS + MARGIN_MS);
    assert.ok(up <= INTERVAL_MS + TIMEOUT_MS + MARGIN_MS, `recovery took ${up} ms`);
    assert.ok(lines().some((l) => l.msg === 'health flip' && l.to === 'healthy' && l.member === `127.0.0.20:${backendPort}`));

    // the addresses are taken: a second demo daemon (API off, DNS elsewhere) stops at startup and names them
    const cfg2 = join(dir, 'second.yaml');
    writeFileSync(cfg2, `dns: { listenAddr: 127.0.0.1, port: ${await freePort()} }\ndatabase: { path: ${join(dir, 'second.db')} }\napi: { enabled: false }\n`);
    const second = await runEntry('gslbd', ['--demo-backends', backends, '--config', cfg2], {}, 60_000);
    assert.equal(second.code, 1, second.stderr);
    assert.match(second.stderr, new RegExp(`backend demo-1 cannot listen on 127\\.0\\.0\\.20:${backendPort} \\(EADDRINUSE\\)`));
    const bad = await runEntry('gslbd', ['--demo-backends', 'localhost:80', '--config', cfg]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /"localhost:80" is not IP:port/);
  } finally {
    if (p.exitCode === null) {
      p.kill('SIGTERM');
      await Promise.race([new Promise((r) => p.once('exit', r)), new Promise((r) => setTimeout(r, 20_000))]);
      if (p.exitCode === null) p.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(p.exitCode, 0, out.slice(-2000));
  await assert.rejects(fetch(`http://127.0.0.21:${backendPort}/`), 'the backends stop with the daemon');
});
