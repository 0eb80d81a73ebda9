import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, runEntry, spawnEntry, waitFor } from '../helpers/proc.js';
import { START_CEILING_MS } from '../helpers/wait.js';

test('gslbd starts from a config file: create a pool, a member and a service, read them back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-start-'));
  const port = await freePort();
  const dnsPort = await freePort();
  const cfg = readFileSync('examples/config.yaml', 'utf8')
    .replace('port: 8080', `port: ${port}`)
    .replace('path: ~/.local/state/gslbd-quickstart/gslbd.db', `path: ${join(dir, 'db.sqlite')}`)
    .replace(/port: 5353/, `port: ${dnsPort}`)
    .replace(/metrics:\n  enablePrometheus: true/, 'metrics:\n  enablePrometheus: false')
    .replace('format: text', 'format: json');
  writeFileSync(join(dir, 'config.yaml'), cfg);
  const p = spawnEntry('gslbd', ['-config', join(dir, 'config.yaml')], { GSLB_API_KEY: '' });
  let err = '';
  p.stderr!.on('data', (d) => { err += d; });
  p.stdout!.on('data', (d) => { err += d; });
  try {
    const base = `http://127.0.0.1:${port}/api/v1`;
    await waitFor(async () => (await fetch(`${base}/health`)).ok, START_CEILING_MS, 50, 'gslbd to answer /health', () => `output: ${err}`);
    const post = (path: string, body: unknown) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.json() as Record<string, unknown> }));
    const pool = await post('/pools', { name: 'web' });
    assert.equal(pool.status, 201);
    const member = await post(`/pools/${pool.body.id}/members`, { ipAddress: '127.0.0.10', port: 80 });
    assert.equal(member.status, 201);
    const svc = await post('/services', { name: 'web', domain: 'www.example.test.', poolId: pool.body.id });
    assert.equal(svc.status, 201);
    const members = await (await fetch(`${base}/pools/${pool.body.id}/members`)).json() as { ipAddress: string }[];
    assert.deepEqual(members.map((m) => m.ipAddress), ['127.0.0.10']);
    const services = await (await fetch(`${base}/services`)).json() as { domain: string }[];
    assert.deepEqual(services.map((s) => s.domain), ['www.example.test.']);
  } finally {
    if (p.exitCode === null) {
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  }
  assert.ok(!/Error/.test(err), err);
});

test('gslbd refuses a bad config with every problem listed, and exits 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-bad-'));
  try {
    writeFileSync(join(dir, 'c.yaml'), 'dns:\n  port: 70000\nlogging:\n  level: loud\n');
    const r = await runEntry('gslbd', ['--config', join(dir, 'c.yaml')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /c\.yaml:2: dns\.port = 70000: must be <= 65535/);
    assert.match(r.stderr, /c\.yaml:4: logging\.level = "loud": must be one of/);
    const missing = await runEntry('gslbd', ['--config', join(dir, 'none.yaml')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read the configuration file \(ENOENT\)/);
    writeFileSync(join(dir, 'db.yaml'), `database:\n  path: ${join(dir, 'no', 'such', 'x.db')}\n`);
    const db = await runEntry('gslbd', ['--config', join(dir, 'db.yaml')]);
    assert.equal(db.code, 1);
    assert.match(db.stderr, /parent directory .* does not exist/);
    const flag = await runEntry('gslbd', ['--bogus']);
    assert.equal(flag.code, 2);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('gslbctl validate --config: exit 0 valid, 1 invalid with every problem, -o json', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbctl-'));
  try {
    const ok = await runEntry('gslbctl', ['validate', '--config', 'examples/config.yaml']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /valid/);
    writeFileSync(join(dir, 'bad.yaml'), 'api:\n  port: 0\n  listenAddr: x\n');
    const bad = await runEntry('gslbctl', ['validate', '--config', join(dir, 'bad.yaml'), '-o', 'json']);
    assert.equal(bad.code, 1);
    const out = JSON.parse(bad.stdout) as { valid: boolean; problems: string[] };
    assert.equal(out.valid, false);
    assert.equal(out.problems.length, 2);
    const unknown = await runEntry('gslbctl', ['nope']);
    assert.equal(unknown.code, 2);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('a BGP peer password (TCP MD5, not supported) stops gslbd and fails gslbctl validate, naming the key and line, never the password', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-bgp-md5-'));
  try {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, `database:\n  path: ${join(dir, 'db.sqlite')}\nbgp:\n  enabled: true\n  localASN: 65000\n  routerID: 192.0.2.1\n  peers:\n    - {remoteASN: 65001, remoteAddr: 192.0.2.2, password: md5-peer-secret}\n`);
    // gslbctl may add the column and the rule id
    const want = /config\.yaml:8(:\d+)?: bgp\.peers\.0\.password = "\[redacted\]": TCP MD5 signatures \(RFC 2385\) are not supported/;
    const r = await runEntry('gslbd', ['--config', file]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /gslbd: invalid configuration:/);
    assert.match(r.stderr, want);
    const v = await runEntry('gslbctl', ['validate', '--config', file]);
    assert.equal(v.code, 1, v.stderr);
    assert.match(`${v.stdout}${v.stderr}`, want);
    assert.ok(!`${r.stderr}${v.stdout}${v.stderr}`.includes('md5-peer-secret'));
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('redirect.enabled without redirect.port stops gslbd naming the key; with a port it starts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-redirect-'));
  try {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, `database:\n  path: ${join(dir, 'db.sqlite')}\nredirect:\n  enabled: true\n`);
    const r = await runEntry('gslbd', ['--config', file]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /redirect\.port = \(unset\): required when redirect\.enabled is true/);
    assert.ok(!/not built yet/.test(r.stderr), r.stderr);
    const v = await runEntry('gslbctl', ['validate', '--config', file]);
    assert.equal(v.code, 1);
    assert.match(`${v.stdout}${v.stderr}`, /redirect\.port/);
    const [apiPort, dnsPort, redirectPort] = [await freePort(), await freePort(), await freePort()];
    writeFileSync(file, [
      `database:\n  path: ${join(dir, 'db.sqlite')}`, `api:\n  enabled: true\n  listenAddr: 127.0.0.1\n  port: ${apiPort}`, `dns:\n  listenAddr: 127.0.0.1\n  port: ${dnsPort}`,
      `redirect:\n  enabled: true\n  listenAddr: 127.0.0.1\n  port: ${redirectPort}`, 'logging:\n  format: json', '',
    ].join('\n'));
    const p = spawnEntry('gslbd', ['--config', file], { GSLB_API_KEY: '' });
    try {
      const base = `http://127.0.0.1:${apiPort}/api/v1`;
      await waitFor(async () => (await fetch(`${base}/health`)).ok, START_CEILING_MS, 50, 'gslbd to answer /health');
      const created = await fetch(`${base}/redirects`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ host: 'old.example.test', target: 'https://new.example.test', code: 301 }) });
      assert.equal(created.status, 201);
      const res = await fetch(`http://127.0.0.1:${redirectPort}/x`, { redirect: 'manual' });
      assert.equal(res.status, 404, 'a host without a rule (fetch sends Host 127.0.0.1)');
    } finally {
      p.kill('SIGTERM');
    }
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('gslbd says how to give a configuration, names a port in use and its setting in one line, and takes -v', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-cli-'));
  const holder = createServer();
  try {
    const v = await runEntry('gslbd', ['-v']);
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^gslbd \S+ \(node 24\./);
    // no --config and no /etc/gslb/config.yaml (skipped on a machine that has one)
    if (!existsSync('/etc/gslb/config.yaml')) {
      const none = await runEntry('gslbd', []);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /no configuration file: \/etc\/gslb\/config\.yaml does not exist\. Give one with --config FILE/);
    }
    // the API port held by another listener: one line, the address and the settings, no stack trace
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()));
    const port = (holder.address() as AddressInfo).port;
    writeFileSync(join(dir, 'c.yaml'), `dns: { listenAddr: 127.0.0.1, port: ${await freePort()} }\ndatabase: { path: ':memory:' }\n`
      + `api: { enabled: true, listenAddr: 127.0.0.1, port: ${port} }\nmetrics: { enablePrometheus: false }\n`);
    const busy = await runEntry('gslbd', ['--config', join(dir, 'c.yaml')]);
    assert.equal(busy.code, 1);
    assert.equal(busy.stderr.trim(), `gslbd: cannot listen on 127.0.0.1:${port} (api.listenAddr, api.port): is already in use; stop what holds it or choose another port`);
  } finally {
    holder.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
