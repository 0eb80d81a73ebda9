import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtVerify } from 'jose';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { freePort, runEntry, spawnEntry, waitFor } from '../helpers/proc.js';
import { issueLicense } from '../../runtime/license/license.js';
import { START_CEILING_MS } from '../helpers/wait.js';

const FILE_SECRET = 'file-signing-secret-0123456789abcdef';
const ENV_SECRET = 'env-signing-secret-fedcba9876543210abcd';

/** Runs the real gslbd on free ports until `fn` is done; returns what it printed. */
async function withGslbd(cfg: string, env: NodeJS.ProcessEnv, fn: (base: string) => Promise<void>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-license-'));
  const port = await freePort();
  writeFileSync(join(dir, 'config.yaml'), `node: {id: lic}\ndatabase: {path: ${join(dir, 'db.sqlite')}}\napi: {enabled: true, listenAddr: 127.0.0.1, port: ${port}}\ndns: {listenAddr: 127.0.0.1, port: ${await freePort()}}\nlogging: {format: json}\n${cfg}`);
  const p = spawnEntry('gslbd', ['--config', join(dir, 'config.yaml')], { GSLB_API_KEY: '', GSLB_LICENSE_SECRET: '', GSLB_LICENSE_KEY: '', ...env });
  let out = '';
  p.stdout!.on('data', (d) => { out += d; });
  p.stderr!.on('data', (d) => { out += d; });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => (await fetch(`${base}/api/v1/health`)).ok, START_CEILING_MS, 50, 'gslbd to answer /api/v1/health', () => out);
    await fn(base);
  } finally {
    if (p.exitCode === null) {
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

test('gslbd with a bad license starts at the free tier and warns without the token or secret; the environment wins over the file; gslbctl license issue signs a token that verifies, license show reads it', async () => {
  const wrong = await issueLicense({ tier: 'pro', licensee: 'Wrong Secret Ltd', expiresAt: Math.floor(Date.now() / 1000) + 86_400 }, 'some-other-secret-0123456789abcdef');
  const fileCfg = `license:\n  secret: ${FILE_SECRET}\n  licenseKey: ${wrong}\n`;

  // the file's license is signed with another secret: a warning, the free tier, never a failed start
  const logs = await withGslbd(fileCfg, {}, async (base) => {
    const l = await api(base, 'GET', '/api/v1/license');
    assert.equal(l.status, 200);
    assert.deepEqual(l.body, { status: 'invalid', tier: 'free', licensedTier: null, licensee: null, expiresAt: null, reason: 'the signature does not verify with the signing secret' });
  });
  const warning = logs.split('\n').filter((line) => line.includes('"license invalid: running at the free tier"'));
  assert.equal(warning.length, 1, logs);
  assert.match(warning[0]!, /"level":40/);
  for (const secret of [FILE_SECRET, wrong, wrong.split('.')[2]!]) assert.ok(!logs.includes(secret), 'a secret or the token is logged');

  // gslbctl license issue: the token alone on stdout, signed with GSLB_LICENSE_SECRET
  const issued = await runEntry('gslbctl', ['license', 'issue', '--tier', 'pro', '--licensee', 'Example Corp', '--expires', '2099-12-31'], { GSLB_LICENSE_SECRET: ENV_SECRET });
  assert.equal(issued.code, 0, issued.stderr);
  const token = issued.stdout.trim();
  assert.equal(issued.stdout, `${token}\n`);
  const { payload } = await jwtVerify(token, new TextEncoder().encode(ENV_SECRET), { algorithms: ['HS256'] });
  assert.deepEqual([payload.tier, payload.sub, payload.exp], ['pro', 'Example Corp', Date.UTC(2100, 0, 1) / 1000]);

  // the same file, with the environment's secret and key: they win
  const envLogs = await withGslbd(fileCfg, { GSLB_LICENSE_SECRET: ENV_SECRET, GSLB_LICENSE_KEY: token }, async (base) => {
    const l = await api(base, 'GET', '/api/v1/license');
    assert.deepEqual(l.body, { status: 'valid', tier: 'pro', licensedTier: 'pro', licensee: 'Example Corp', expiresAt: Date.UTC(2100, 0, 1) / 1000, reason: null });
    const show = await runEntry('gslbctl', ['license', 'show', '--server', base]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^Status: +valid\nTier: +pro\nLicensee: +Example Corp\nExpires: +2100-01-01 00:00:00Z\n$/);
  });
  assert.match(envLogs, /"msg":"license valid"/);
  for (const secret of [ENV_SECRET, token]) assert.ok(!envLogs.includes(secret), 'a secret or the token is logged');
});

test('gslbctl license issue refuses what it cannot sign (exit 2)', async () => {
  const rows: { args: string[]; env: NodeJS.ProcessEnv; err: RegExp }[] = [
    { args: ['--tier', 'pro', '--licensee', 'X', '--expires', '2099-12-31'], env: {}, err: /GSLB_LICENSE_SECRET is not set/ },
    { args: ['--tier', 'pro', '--licensee', 'X', '--expires', '2099-12-31'], env: { GSLB_LICENSE_SECRET: 'short' }, err: /shorter than 32 characters/ },
    { args: ['--tier', 'gold', '--licensee', 'X', '--expires', '2099-12-31'], env: { GSLB_LICENSE_SECRET: ENV_SECRET }, err: /tier "gold": must be one of free, pro, enterprise/ },
    { args: ['--tier', 'pro', '--licensee', 'X', '--expires', '31.12.2099'], env: { GSLB_LICENSE_SECRET: ENV_SECRET }, err: /--expires 31\.12\.2099: expected a date/ },
    { args: ['--tier', 'pro', '--licensee', 'X', '--expires', '2099-02-30'], env: { GSLB_LICENSE_SECRET: ENV_SECRET }, err: /--expires 2099-02-30: not a date/ },
    { args: ['--tier', 'pro', '--licensee', 'X', '--expires', '2001-01-01'], env: { GSLB_LICENSE_SECRET: ENV_SECRET }, err: /not in the future/ },
    { args: ['--tier', 'pro'], env: { GSLB_LICENSE_SECRET: ENV_SECRET }, err: /usage: license issue/ },
  ];
  for (const r of rows) {
    const res = await runEntry('gslbctl', ['license', 'issue', ...r.args], { GSLB_LICENSE_SECRET: '', ...r.env });
    assert.equal(res.code, 2, `${r.args.join(' ')}: ${res.stdout}${res.stderr}`);
    assert.match(res.stderr, r.err);
    assert.equal(res.stdout, '');
  }
});

test('a license that expires while the daemon runs: the tier falls back to free at that moment, logged once, GET /license says expired', { timeout: 300_000 }, async () => {
  // The license must still be valid when the daemon has started and been asked; how long that
  // takes is the machine's business. A first try lives 4 s; a try whose start outlived its license
  // (the clock says so: nothing else is excused) is run again with twice as long, up to 64 s.
  for (let lifeS = 4; ; lifeS *= 2) {
    const expiresAt = Math.floor(Date.now() / 1000) + lifeS;
    const outcome = await expiryRun(expiresAt);
    if (outcome === 'done') return;
    assert.ok(lifeS < 64, `the daemon did not start within ${lifeS} s, even on a loaded machine`);
  }
});

/** One run of the expiry test; 'too slow' when the license had expired before the valid state was seen. */
async function expiryRun(expiresAt: number): Promise<'done' | 'too slow'> {
  const token = await issueLicense({ tier: 'enterprise', licensee: 'Short Term', expiresAt }, FILE_SECRET);
  const d = await startTestDaemon({ license: { secret: FILE_SECRET, licenseKey: token } });
  try {
    const port = d.core.ports.license!;
    try {
      assert.ok(d.logs.lines.some((l) => l.msg === 'license valid'), 'valid when the daemon started');
      assert.equal(port.hasTier('pro'), true);
      assert.equal(port.hasTier('enterprise'), true);
      assert.equal((await api(d.url, 'GET', '/api/v1/license')).body.status, 'valid');
      assert.match(await d.core.metrics.metrics(), /gslbd_license_info\{tier="enterprise",status="valid"[^}]*\} 1/);
    } catch (err) {
      if (Date.now() >= expiresAt * 1000) return 'too slow';
      throw err;
    }
    const expiredLines = () => d.logs.lines.filter((l) => l.msg === 'license expired: running at the free tier');
    await waitFor(() => expiredLines().length > 0, 120_000, 50, 'the expiry to be logged');
    assert.ok(Date.now() >= expiresAt * 1000, 'not before the expiry');
    await new Promise((r) => setTimeout(r, 200)); // a window for a second line, which must not come
    assert.equal(expiredLines().length, 1);
    assert.equal(expiredLines()[0]!.level, 40);
    assert.equal(port.hasTier('pro'), false);
    assert.equal(port.hasTier('free'), true);
    const l = await api(d.url, 'GET', '/api/v1/license');
    assert.deepEqual(l.body, { status: 'expired', tier: 'free', licensedTier: 'enterprise', licensee: 'Short Term', expiresAt, reason: `the license expired at ${new Date(expiresAt * 1000).toISOString()}` });
    assert.match(await d.core.metrics.metrics(), /gslbd_license_info\{tier="free",status="expired"[^}]*\} 1/);
    assert.match(await d.core.metrics.metrics(), new RegExp(`gslbd_license_expiry_timestamp_seconds\\{[^}]*\\} ${expiresAt}`));
    assert.ok(!d.logs.text().includes(token) && !d.logs.text().includes(FILE_SECRET));
    return 'done';
  } finally {
    await d.stop();
  }
}

test('no license: the free tier, status none, an info line (no warning)', async () => {
  const d = await startTestDaemon();
  try {
    assert.deepEqual((await api(d.url, 'GET', '/api/v1/license')).body, { status: 'none', tier: 'free', licensedTier: null, licensee: null, expiresAt: null, reason: 'no license key: set license.licenseKey or GSLB_LICENSE_KEY' });
    assert.equal(d.core.ports.license!.hasTier('pro'), false);
    const line = d.logs.lines.find((l) => l.component === 'license');
    assert.equal(line?.msg, 'no license: free tier');
    assert.equal(line?.level, 30);
  } finally {
    await d.stop();
  }
});
