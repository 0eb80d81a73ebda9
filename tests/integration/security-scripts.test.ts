import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture } from '../helpers/git-fixture.js';
import { waitUntil } from '../helpers/wait.js';

// docs/health.md "Script checks" and docs/security.md "Code and outbound connections".

const DISABLED = 'script health checks are disabled on this server (health.allowScripts)';
const SYSTEM_ONLY = 'script health checks may only be set by the system key or in git';
const SYS = randomBytes(32).toString('hex');
const SECRET = randomBytes(32).toString('hex');

// The daemon's own process environment carries secrets; a script must see none of them.
Object.assign(process.env, {
  GSLB_API_KEY: SYS, GSLB_SECRET_KEY: SECRET, GSLB_LICENSE_KEY: 'license-key', GSLB_LICENSE_SECRET: 'license-secret', NATS_PASSWORD: 'nats-password',
});

/** Scripts on disk: an allowed directory, an outside one, and the ways out of the allowed one. */
function scriptTree() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'gslbd-sec-scripts-')));
  const checks = join(root, 'checks');
  const outside = join(root, 'outside');
  mkdirSync(checks);
  mkdirSync(outside);
  const script = (p: string, body: string) => { writeFileSync(p, `#!/bin/sh\n${body}\n`); chmodSync(p, 0o755); return p; };
  const ok = script(join(checks, 'ok.sh'), 'exit 0');
  const evil = script(join(outside, 'evil.sh'), `echo ran >> ${join(root, 'evil-ran')}\nexit 0`);
  symlinkSync(evil, join(checks, 'link.sh'));
  symlinkSync(outside, join(checks, 'sub'));
  mkdirSync(`${checks}-evil`);
  script(join(`${checks}-evil`, 'x.sh'), 'exit 0');
  return { root, checks, outside, ok, evil, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

type Headers = Record<string, string>;

/** Two tenants, each with a tenant_admin, an operator and a legacy tenant key; plus the system key. */
async function principals(d: TestDaemon): Promise<Record<string, Headers>> {
  const sys = { authorization: `Bearer ${SYS}` };
  const ok = async (m: string, p: string, body: unknown, h: Headers = sys) => {
    const r = await api(d.url, m, p, body, h);
    assert.ok(r.status < 300, `${m} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await ok('POST', '/api/v1/tenants', { id: 'acme', name: 'Acme' });
  const out: Record<string, Headers> = { system: sys };
  for (const tenant of ['default', 'acme']) {
    for (const role of ['tenant_admin', 'operator']) {
      const email = `${role}@${tenant}.test`;
      await ok('POST', '/api/v1/users', { email, password: `${role}-pass-123`, role, tenantId: tenant });
      const { token } = await ok('POST', '/api/v1/auth/login', { email, password: `${role}-pass-123` }, {});
      out[`${tenant} ${role}`] = { authorization: `Bearer ${token}` };
    }
    const { key } = await ok('POST', `/api/v1/tenants/${tenant}/apikeys`, { name: 'legacy' });
    out[`${tenant} legacy key`] = { authorization: `Bearer ${key}` };
  }
  return out;
}

/** A pool of the caller's tenant with one member; returns its id. */
async function poolOf(d: TestDaemon, h: Headers, name: string, ip = '127.0.0.20'): Promise<string> {
  const p = await api(d.url, 'POST', '/api/v1/pools', { name }, h);
  assert.equal(p.status, 201, JSON.stringify(p.body));
  const m = await api(d.url, 'POST', `/api/v1/pools/${p.body.id}/members`, { ipAddress: ip, port: 80 }, h);
  assert.equal(m.status, 201, JSON.stringify(m.body));
  return p.body.id as string;
}

const putCheck = (d: TestDaemon, h: Headers, pool: string, body: unknown) => api(d.url, 'PUT', `/api/v1/pools/${pool}/healthcheck`, body, h);

/** Waits (tests/helpers/wait.ts) until `probe` gives something other than undefined. */
async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  return (await waitUntil(what, async () => { const v = await probe(); return v === undefined ? undefined : { v }; }, { everyMs: 100 })).v;
}

test('scripts disabled (the default): every caller gets 403, the system key included; webhook checks still work for an operator', async (t) => {
  const tree = scriptTree();
  const d = await startTestDaemon({ auth: { bcryptCost: 10 } } as never, { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: SECRET });
  t.after(async () => { await d.stop(); tree.cleanup(); });
  const who = await principals(d);
  const bodies = [
    { type: 'script', scriptContent: '#!/bin/sh\nexit 0\n' },
    { type: 'script', scriptPath: tree.ok },
    { type: 'tcp', scriptContent: '#!/bin/sh\nexit 0\n' }, // inert today, one type change away from running
  ];
  for (const [name, h] of Object.entries(who)) {
    const pool = await poolOf(d, h, `p-${name.replace(/ /g, '-')}`);
    for (const body of bodies) {
      const r = await putCheck(d, h, pool, body);
      assert.deepEqual([r.status, r.body], [403, { error: DISABLED }], `${name} ${JSON.stringify(body)}`);
    }
    assert.equal((await api(d.url, 'GET', `/api/v1/pools/${pool}/healthcheck`, undefined, h)).status, 404, `${name}: nothing stored`);
  }
  const pool = await poolOf(d, who['default operator']!, 'webhook-pool');
  const r = await putCheck(d, who['default operator']!, pool, { type: 'webhook', webhookURL: 'http://127.0.0.1:9/hc', timeoutMs: 500 });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.type, 'webhook');
});

test('scripts allowed: tenants (any role, legacy keys) get 403; the system key only inside scriptDirs, symlinks and .. resolved', async (t) => {
  const tree = scriptTree();
  const d = await startTestDaemon({ auth: { bcryptCost: 10 }, health: { allowScripts: true, scriptDirs: [tree.checks] } } as never, { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: SECRET });
  t.after(async () => { await d.stop(); tree.cleanup(); });
  const who = await principals(d);
  for (const [name, h] of Object.entries(who)) {
    if (name === 'system') continue;
    const pool = await poolOf(d, h, `p-${name.replace(/ /g, '-')}`);
    for (const body of [{ type: 'script', scriptPath: tree.ok }, { type: 'script', scriptContent: '#!/bin/sh\nexit 0\n' }, { type: 'http', scriptPath: tree.ok }]) {
      const r = await putCheck(d, h, pool, body);
      assert.deepEqual([r.status, r.body], [403, { error: SYSTEM_ONLY }], `${name} ${JSON.stringify(body)}`);
    }
  }
  const sys = who.system!;
  const pool = await poolOf(d, sys, 'system-pool');
  const rows: { name: string; scriptPath: string; status: number; error?: RegExp }[] = [
    { name: 'inside scriptDirs', scriptPath: tree.ok, status: 200 },
    { name: 'outside', scriptPath: tree.evil, status: 403, error: new RegExp(`^scriptPath ${tree.evil} is outside the allowed script directories \\(health\\.scriptDirs: ${tree.checks}\\)$`) },
    { name: 'symlink escape', scriptPath: join(tree.checks, 'link.sh'), status: 403, error: new RegExp(`resolves to ${tree.evil}\\) is outside the allowed script directories \\(health\\.scriptDirs: ${tree.checks}\\)`) },
    { name: 'symlinked directory', scriptPath: join(tree.checks, 'sub', 'evil.sh'), status: 403, error: /is outside the allowed script directories/ },
    { name: '.. escape', scriptPath: `${tree.checks}/../outside/evil.sh`, status: 403, error: /is outside the allowed script directories/ },
    { name: 'sibling sharing the prefix', scriptPath: `${tree.checks}-evil/x.sh`, status: 403, error: /is outside the allowed script directories/ },
    { name: 'missing file', scriptPath: join(tree.checks, 'missing.sh'), status: 400, error: /cannot be resolved on this node \(ENOENT\)/ },
    { name: 'relative path', scriptPath: 'checks/ok.sh', status: 400, error: /must be an absolute path/ },
  ];
  for (const r of rows) {
    const res = await putCheck(d, sys, pool, { type: 'script', scriptPath: r.scriptPath, intervalMs: 60_000 });
    assert.equal(res.status, r.status, `${r.name}: ${JSON.stringify(res.body)}`);
    if (r.error) assert.match(res.body.error, r.error, r.name);
  }
  const stored = await api(d.url, 'GET', `/api/v1/pools/${pool}/healthcheck`, undefined, sys);
  assert.equal(stored.body.scriptPath, tree.ok, 'refused writes changed nothing');
  assert.equal(existsSync(join(tree.root, 'evil-ran')), false);
});

test('a script sees only PATH, LANG, SVC_HC_IP and SVC_HC_PORT, and runs in its own directory', async (t) => {
  const tree = scriptTree();
  const out = join(tree.root, 'out');
  mkdirSync(out);
  // /proc/$$/environ is exactly what the daemon passed to exec (the shell adds PWD etc. only to children)
  const dump = (tag: string) => `tr '\\000' '\\n' < /proc/$$/environ > ${out}/${tag}.env.tmp && pwd > ${out}/${tag}.cwd && mv ${out}/${tag}.env.tmp ${out}/${tag}.env\nexit 0`;
  const envScript = join(tree.checks, 'env.sh');
  writeFileSync(envScript, `#!/bin/sh\n${dump('path')}\n`);
  chmodSync(envScript, 0o755);
  const d = await startTestDaemon({ health: { allowScripts: true, scriptDirs: [tree.checks] } }, { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: SECRET });
  t.after(async () => { await d.stop(); tree.cleanup(); });
  const sys = { authorization: `Bearer ${SYS}` };
  const byPath = await poolOf(d, sys, 'by-path', '127.0.0.21');
  const byContent = await poolOf(d, sys, 'by-content', '127.0.0.22');
  assert.equal((await putCheck(d, sys, byPath, { type: 'script', scriptPath: envScript, port: 8081, intervalMs: 500, timeoutMs: 250 })).status, 200);
  assert.equal((await putCheck(d, sys, byContent, { type: 'script', scriptContent: `#!/bin/sh\n${dump('content')}\n`, port: 8082, intervalMs: 500, timeoutMs: 250 })).status, 200);
  const want = { path: ['127.0.0.21', '8081'], content: ['127.0.0.22', '8082'] };
  for (const [tag, [ip, port]] of Object.entries(want)) {
    const text = await waitFor(`${tag}.env`, () => (existsSync(join(out, `${tag}.env`)) ? readFileSync(join(out, `${tag}.env`), 'utf8') : undefined));
    const env = Object.fromEntries(text.split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    assert.deepEqual(env, { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', SVC_HC_IP: ip, SVC_HC_PORT: port }, tag);
    assert.ok(!text.includes(SYS) && !text.includes(SECRET), `${tag}: no secret in the environment`);
    const cwd = readFileSync(join(out, `${tag}.cwd`), 'utf8').trim();
    if (tag === 'path') assert.equal(cwd, tree.checks);
    else assert.match(cwd, /\/gslbd-hc-[^/]+$/, 'scriptContent runs in its private temp directory');
  }
  assert.ok(process.env.GSLB_API_KEY, 'the daemon process itself had the secrets');
});

test('git: a script check is a validation error with file:line when scripts are disabled or scriptPath leaves scriptDirs; accepted when allowed', async (t) => {
  const tree = scriptTree();
  const fx = await startGitFixture();
  t.after(async () => { await fx.close(); tree.cleanup(); });
  const manifest = (scriptPath: string) => [
    'apiVersion: gslb/v1', 'kind: Pool', 'metadata:', '  name: scripted', 'spec:', '  members:', '    - ipAddress: 127.0.0.23', '      port: 80',
    '  healthCheck:', '    type: script', `    scriptPath: ${scriptPath}`, '    intervalMs: 60000', '',
  ].join('\n');
  fx.repo.write('pools/scripted.yaml', manifest(tree.ok));
  const first = fx.repo.commit('A script check', fx.ops);
  const reconcile = async (d: TestDaemon) => (await api(d.url, 'POST', '/api/v1/gitops/reconcile', { force: false })).body;

  const off = await startTestDaemon({ gitops: fx.gitops });
  try {
    const s = await reconcile(off);
    assert.equal(s.ready, false);
    assert.equal(s.reason, 'ManifestsInvalid', s.message);
    const problems = s.problems as string[];
    assert.ok(problems.some((p) => /^pools\/scripted\.yaml:10\b.*spec\.healthCheck\.type\b.*script health checks are disabled on this server \(health\.allowScripts\)/.test(p)), problems.join('\n'));
    assert.equal((await api(off.url, 'GET', '/api/v1/pools')).body.length, 0, 'nothing applied');
  } finally {
    await off.stop();
  }

  const on = await startTestDaemon({ gitops: fx.gitops, health: { allowScripts: true, scriptDirs: [tree.checks] } });
  try {
    let s = await reconcile(on);
    assert.equal(s.ready, true, s.message);
    assert.equal(s.lastAppliedRevision, first);
    const pools = (await api(on.url, 'GET', '/api/v1/pools')).body as { id: string; origin: string }[];
    assert.equal(pools.length, 1);
    assert.equal((await api(on.url, 'GET', `/api/v1/pools/${pools[0]!.id}/healthcheck`)).body.scriptPath, tree.ok);
    const before = on.core.holder.current;
    fx.repo.write('pools/scripted.yaml', manifest(join(tree.checks, 'link.sh')));
    fx.repo.commit('Point the check outside', fx.ops);
    s = await reconcile(on);
    assert.equal(s.ready, false);
    assert.equal(s.reason, 'ManifestsInvalid');
    assert.ok((s.problems as string[]).some((p) => /^pools\/scripted\.yaml:11\b.*spec\.healthCheck\.scriptPath\b.*is outside the allowed script directories \(health\.scriptDirs: /.test(p)), (s.problems as string[]).join('\n'));
    assert.equal(on.core.holder.current, before, 'the old state keeps serving');
    assert.equal(s.lastAppliedRevision, first);
  } finally {
    await on.stop();
  }
  assert.equal(existsSync(join(tree.root, 'evil-ran')), false);
});

test('run time: a stored script check on a node that does not allow it never runs; unhealthy with the reason, warned once', async (t) => {
  const tree = scriptTree();
  const dbDir = mkdtempSync(join(tmpdir(), 'gslbd-sec-db-'));
  t.after(() => { tree.cleanup(); rmSync(dbDir, { recursive: true, force: true }); });
  const marker = join(tree.root, 'ran');
  const script = join(tree.checks, 'marker.sh');
  writeFileSync(script, `#!/bin/sh\necho ran >> ${marker}\nexit 0\n`);
  chmodSync(script, 0o755);
  const database = { path: join(dbDir, 'gslbd.db') };
  const sys = { authorization: `Bearer ${SYS}` };

  // a check row written while scripts were allowed (or replicated from a node that allows them)
  const first = await startTestDaemon({ database, health: { allowScripts: true, scriptDirs: [tree.checks] } }, { GSLB_API_KEY: SYS });
  let pool: string;
  try {
    pool = await poolOf(first, sys, 'stale', '127.0.0.24');
    assert.equal((await putCheck(first, sys, pool, { type: 'script', scriptPath: script, intervalMs: 200, timeoutMs: 100 })).status, 200);
    await waitFor('the script to run while allowed', () => (existsSync(marker) ? true : undefined));
  } finally {
    await first.stop();
  }

  const rows = [
    { name: 'scripts disabled', health: {}, detail: 'script checks are disabled on this node' },
    { name: 'scriptPath outside scriptDirs', health: { allowScripts: true, scriptDirs: [tree.outside] }, detail: 'scriptPath is outside health.scriptDirs on this node' },
  ];
  for (const r of rows) {
    rmSync(marker, { force: true });
    const d = await startTestDaemon({ database, health: r.health }, { GSLB_API_KEY: SYS });
    try {
      // several probes: the member is unhealthy and its lastChecked moved on three times
      const seen = new Set<number>();
      await waitFor(`${r.name}: member unhealthy over several probes`, async () => {
        const st = (await api(d.url, 'GET', `/api/v1/pools/${pool}/status`, undefined, sys)).body as { healthy: boolean; lastChecked: number }[];
        if (st[0]?.healthy === false) seen.add(st[0].lastChecked);
        return seen.size >= 3 ? true : undefined;
      });
      const warned = d.logs.lines.filter((l) => l.level === 40 && l.msg === 'script health check refused on this node');
      assert.equal(warned.length, 1, `${r.name}: one warning per check, not per probe`);
      assert.equal(warned[0]!.detail, r.detail);
      assert.equal(existsSync(marker), false, `${r.name}: the script never ran`);
    } finally {
      await d.stop();
    }
  }
});
