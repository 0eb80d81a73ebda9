import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { startTestDaemon, api } from '../helpers/daemon.js';
import { startGitFixture } from '../helpers/git-fixture.js';
import { childEnv, freePort, waitFor } from '../helpers/proc.js';
import { createLogger } from '../../runtime/log/logger.js';

// The info-level lines an operator relies on (docs/logging.md): one per listener bound, one per
// health flip, one per applied or refused revision; probes only at debug; pino's field names.

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const INFO = 30;
type Line = Record<string, unknown>;

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => { server.once('error', reject); server.listen(port, '127.0.0.1', () => resolve()); });
}

test('each listener is logged once at info with the address actually bound', async () => {
  const d = await startTestDaemon({ metrics: { enablePrometheus: true, listenAddr: '127.0.0.1', port: 0 } });
  try {
    const want: Record<string, string> = {
      api: `127.0.0.1:${d.apiAddress!.port}`,
      'dns udp': `127.0.0.1:${d.ports.dnsPort as number}`,
      'dns tcp': `127.0.0.1:${d.ports.dnsPort as number}`,
      metrics: `127.0.0.1:${d.ports.metricsPort as number}`,
    };
    const lines = d.logs.lines.filter((l) => l.msg === 'listening');
    assert.deepEqual(Object.fromEntries(lines.map((l) => [l.listener, l.address])), want);
    assert.equal(lines.length, 4, 'one line per listener');
    assert.ok(lines.every((l) => l.level === INFO));
  } finally {
    await d.stop();
  }
});

test('a health flip is one info line with pool, member, from, to and the deciding probe; probes are debug', async () => {
  const port = await freePort();
  const backend = createServer((_req, res) => { res.end('ok'); });
  await listen(backend, port);
  const d = await startTestDaemon();
  try {
    const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'web' })).body as { id: string };
    assert.equal((await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '127.0.0.1', port })).status, 201);
    const hc = await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'http', port, intervalMs: 200, timeoutMs: 500 });
    assert.equal(hc.status, 200, JSON.stringify(hc.body));
    const member = `127.0.0.1:${port}`;
    const flips = () => d.logs.lines.filter((l) => l.msg === 'health flip');
    const probes = (ok: boolean) => d.logs.lines.filter((l) => l.msg === 'probe' && l.member === member && l.ok === ok);
    await waitFor(() => probes(true).length > 0, 10_000);
    assert.equal(probes(true)[0]!.level, 20, 'probes are debug');
    assert.deepEqual(flips(), [], 'an optimistic start that holds is no flip');

    await new Promise<void>((resolve) => { backend.close(() => resolve()); backend.closeAllConnections(); });
    const down = await waitFor(() => flips().find((l) => l.to === 'unhealthy'), 10_000);
    assert.equal(down.level, INFO);
    assert.deepEqual(
      { poolId: down.poolId, pool: down.pool, member: down.member, check: down.check, from: down.from, to: down.to },
      { poolId: pool.id, pool: 'web', member, check: 'http', from: 'healthy', to: 'unhealthy' },
    );
    assert.match(String(down.detail), /ECONNREFUSED/);
    assert.ok(probes(false).some((l) => /ECONNREFUSED/.test(String(l.detail))), 'the failed probe is at debug with its detail');

    await listen(backend, port);
    const up = await waitFor(() => flips().find((l) => l.to === 'healthy'), 10_000);
    assert.deepEqual({ member: up.member, from: up.from, to: up.to, detail: up.detail, level: up.level }, { member, from: 'unhealthy', to: 'healthy', detail: 'status 200', level: INFO });
    assert.equal(flips().length, 2, 'one line per flip, none per steady probe');
  } finally {
    await d.stop();
    backend.close();
  }
});

test('an applied revision is one info line with revision, signer and counts; a refusal one warn line; a quiet poll is debug', async () => {
  const fx = await startGitFixture();
  fx.copyTree(join(ROOT, 'examples/config-repo'));
  const good = fx.repo.commit('Add the example config', fx.ops);
  const d = await startTestDaemon({ gitops: fx.gitops }, { GITOPS_WEBHOOK_SECRET: fx.webhookSecret });
  try {
    const reconcile = async () => (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body as { ready: boolean; reason: string };
    assert.equal((await reconcile()).ready, true);
    const applied = d.logs.lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('reconcile applied'));
    assert.equal(applied.length, 1);
    const a = applied[0]!;
    assert.equal(a.level, INFO);
    assert.equal(a.msg, 'reconcile applied: plan creates=17 updates=0 deletes=0');
    assert.deepEqual({ revision: a.revision, signer: a.signer, create: a.create, update: a.update, delete: a.delete }, { revision: good, signer: fx.ops.fingerprint, create: 17, update: 0, delete: 0 });

    // the applied head polled again: nothing at info
    const before = d.logs.lines.length;
    assert.equal((await reconcile()).ready, true);
    const quiet = d.logs.lines.slice(before).filter((l) => l.component === 'gitops');
    assert.ok(quiet.some((l) => String(l.msg).startsWith('reconcile unchanged') && l.level === 20), JSON.stringify(quiet));
    assert.ok(quiet.every((l) => (l.level as number) < INFO), JSON.stringify(quiet));

    fx.repo.write('services/www.yaml', 'apiVersion: gslb/v1\nkind: Service\nmetadata: {name: www}\nspec: {domain: www.example.test., pool: eu-west, ttl: 25}\n');
    const unsigned = fx.repo.commit('unsigned change');
    assert.equal((await reconcile()).reason, 'SignatureMissing');
    await reconcile(); // the same refused head again: not announced twice
    const refused = d.logs.lines.filter((l) => (l.level as number) >= INFO && l.reason === 'SignatureMissing');
    assert.equal(refused.length, 1, JSON.stringify(refused));
    assert.equal(refused[0]!.msg, 'reconcile failed: SignatureMissing');
    assert.equal(refused[0]!.revision, unsigned);
  } finally {
    await d.stop();
    await fx.close();
  }
});

test('log lines carry pino\'s fields (level, time, pid, hostname, msg, err); text format is one pino-pretty line', async () => {
  const lines: Line[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, cb) { for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Line); cb(); } });
  const log = createLogger({ format: 'json', level: 'info' }, sink);
  log.info({ listener: 'api', address: '127.0.0.1:8080' }, 'listening');
  log.error({ err: new Error('boom') }, 'shutdown step failed');
  log.debug('not at info');
  await new Promise((r) => setImmediate(r));
  assert.equal(lines.length, 2);
  const [info, error] = lines as [Line, Line];
  assert.deepEqual(Object.keys(info).slice(0, 4), ['level', 'time', 'pid', 'hostname']);
  assert.deepEqual({ level: info.level, pid: info.pid, hostname: info.hostname, msg: info.msg }, { level: INFO, pid: process.pid, hostname: hostname(), msg: 'listening' });
  assert.equal(typeof info.time, 'number');
  assert.equal(error.level, 50);
  const err = error.err as { type: string; message: string; stack: string };
  assert.deepEqual([err.type, err.message, err.stack.split('\n')[0]], ['Error', 'boom', 'Error: boom']);

  // `format: text` goes through pino-pretty in its transport thread: one line per entry, fields inline
  const code = "import('./runtime/log/logger.ts').then((m) => m.createLogger({ format: 'text', level: 'info' }).info({ listener: 'api', address: '127.0.0.1:8080' }, 'listening'))";
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', code], { cwd: ROOT, env: childEnv(), timeout: 60_000 });
  assert.match(stdout, /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [+-]\d{4}\] INFO \(\d+\): listening \{"listener":"api","address":"127\.0\.0\.1:8080"\}\n$/);
});
