// test-timeout: 2400000
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseConfigText } from '../../runtime/config/load.js';
import { childEnv } from '../helpers/proc.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');

async function sh(cmd: string, args: string[], opts: { timeout?: number; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(cmd, args, { cwd: ROOT, env: childEnv(opts.env), timeout: opts.timeout ?? 60_000, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? e.message };
  }
}

test('the image default config listens on 0.0.0.0, keeps the database on the volume, and is valid', () => {
  const c = parseConfigText(readFileSync(join(ROOT, 'docker/config.yaml'), 'utf8'), 'docker/config.yaml');
  assert.deepEqual([c.dns.listenAddr, c.api.listenAddr, c.metrics.listenAddr], ['0.0.0.0', '0.0.0.0', '0.0.0.0']);
  assert.deepEqual([c.dns.port, c.api.port, c.metrics.port, c.api.enabled], [5353, 8080, 9090, true]);
  assert.equal(c.database.path, '/var/lib/gslbd/gslbd.db');
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  assert.match(dockerfile, /^COPY docker\/config\.yaml \/etc\/gslb\/config\.yaml$/m, 'the config the CMD names is in the image');
  assert.match(dockerfile, /^HEALTHCHECK .*\n?.*\/api\/v1\/health/m);
  assert.match(dockerfile, /^USER gslbd$/m);
  assert.match(dockerfile, /^EXPOSE 5353\/udp 5353\/tcp 8080\/tcp 9090\/tcp$/m);
});

test('the image entry point refuses dev mode unless GSLBD_DEV=1 asks for it', async () => {
  const refused = await sh('sh', ['docker/entrypoint.sh', '--config', '/etc/gslb/config.yaml'], { env: { GSLB_API_KEY: '', GSLBD_DEV: '' } });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /GSLB_API_KEY is not set/);
  // with GSLBD_DEV=1 it goes on to start node on /app (absent outside the image): it got past the check
  const dev = await sh('sh', ['docker/entrypoint.sh', '--config', '/etc/gslb/config.yaml'], { env: { GSLB_API_KEY: '', GSLBD_DEV: '1' } });
  assert.match(dev.stderr, /dev mode, every API request is a system admin/);
  assert.doesNotMatch(dev.stderr, /GSLB_API_KEY is not set/);
});

/** Why docker cannot be used here (no client, or no daemon), or undefined when it can. */
async function dockerUnavailable(): Promise<string | undefined> {
  const v = await sh('docker', ['version', '--format', '{{.Server.Version}}'], { timeout: 20_000 });
  if (v.code === -1 && /ENOENT/.test(v.stderr)) return 'docker not installed: no docker command on PATH';
  if (v.code !== 0) return `docker not installed (no reachable daemon): ${v.stderr.trim().split('\n').at(-1)}`;
  return undefined;
}

test('docker build and run: the container turns healthy and serves the API; without GSLB_API_KEY it exits', async (t) => {
  const why = await dockerUnavailable();
  if (why) { t.skip(why); return; }
  const tag = `gslbd-test:${process.pid}`;
  const name = `gslbd-test-${process.pid}`;
  t.after(async () => {
    await sh('docker', ['rm', '-f', name]);
    await sh('docker', ['rmi', '-f', tag]);
  });
  const built = await sh('docker', ['build', '-t', tag, '.'], { timeout: 25 * 60_000 });
  assert.equal(built.code, 0, built.stderr.slice(-4000));

  const noKey = await sh('docker', ['run', '--rm', tag], { timeout: 60_000 });
  assert.notEqual(noKey.code, 0);
  assert.match(noKey.stderr, /GSLB_API_KEY is not set/);

  const version = await sh('docker', ['run', '--rm', tag, '--version']);
  assert.match(version.stdout, /^gslbd \S+ \(node 24\./);

  // published on loopback only, to a port docker picks
  const started = await sh('docker', ['run', '-d', '--name', name, '-e', 'GSLB_API_KEY=test-key-0123456789', '-p', '127.0.0.1::8080', tag]);
  assert.equal(started.code, 0, started.stderr);
  let health = '';
  for (let i = 0; i < 120 && health !== 'healthy'; i++) {
    health = (await sh('docker', ['inspect', '--format', '{{.State.Health.Status}}', name])).stdout.trim();
    if (health !== 'healthy') await new Promise((r) => setTimeout(r, 1000));
  }
  const logs = await sh('docker', ['logs', name]);
  assert.equal(health, 'healthy', `HEALTHCHECK never passed:\n${logs.stdout}\n${logs.stderr}`);
  const port = (await sh('docker', ['port', name, '8080/tcp'])).stdout.trim().split(':').at(-1);
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
  assert.deepEqual(await res.json(), { status: 'ok' });
  const denied = await fetch(`http://127.0.0.1:${port}/api/v1/pools`);
  assert.equal(denied.status, 401, 'not dev mode: the API needs the key');
  const allowed = await fetch(`http://127.0.0.1:${port}/api/v1/pools`, { headers: { authorization: 'Bearer test-key-0123456789' } });
  assert.equal(allowed.status, 200);
});
