import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { spawn, spawnSync } from 'node:child_process';
import { pino } from 'pino';
import { createCheckers, tcpProbePath, tcpChecker, type TcpProbePath } from '../../runtime/health/checkers/index.js';
import { NativeTcpChecker, nativeTcpChecker, TCP_PROBE_ENV } from '../../runtime/health/checkers/tcp-native.js';
import type { CheckTarget } from '../../runtime/health/types.js';
import { haveSilentListener, silentListener } from '../helpers/silent-listener.js';
import { close, listen, listenIpv6OrSkip, probeManyAtOnce, target } from '../helpers/tcp-probe-tools.js';
import { waitUntil } from '../helpers/wait.js';

const log = pino({ level: 'silent' });
// This file picks each path explicitly, also in a suite run with GSLBD_TCP_PROBE=net.
delete process.env[TCP_PROBE_ENV];


function native(): NativeTcpChecker {
  const c = nativeTcpChecker();
  if (!(c instanceof NativeTcpChecker)) throw new Error(`native TCP probe addon not loaded: ${c.message}`);
  return c;
}

test('tcp probe: the native path is active by default', () => {
  assert.equal(process.env[TCP_PROBE_ENV], undefined, 'run without GSLBD_TCP_PROBE');
  const checkers = createCheckers(log);
  assert.equal(tcpProbePath(checkers), 'native');
  assert.ok(checkers.tcp instanceof NativeTcpChecker);
});

for (const path of ['native', 'net'] as TcpProbePath[]) {
  test(`tcp probe (${path}): up, then refused after the listener closes, then up again`, async () => {
    const checkers = createCheckers(log, { tcpProbe: path });
    assert.equal(tcpProbePath(checkers), path);
    const run = (t: CheckTarget) => checkers.tcp.check(t, AbortSignal.timeout(t.check.timeoutMs));
    const srv = createServer((s) => s.destroy());
    const port = await listen(srv);
    const t0 = performance.now();
    const up = await run(target('127.0.0.1', port));
    const elapsed = performance.now() - t0;
    assert.equal(up.ok, true, up.detail);
    assert.equal(up.detail, 'connected');
    assert.ok(up.rttMs >= 0 && up.rttMs <= elapsed + 0.01, `the rtt is measured within the check (${up.rttMs} of ${elapsed} ms)`);
    await close(srv);
    const down = await run(target('127.0.0.1', port));
    assert.equal(down.ok, false);
    assert.match(down.detail, /^connect .*ECONNREFUSED/);
    const again = createServer((s) => s.destroy());
    await listen(again, '127.0.0.1', port);
    assert.equal((await run(target('127.0.0.1', port))).ok, true);
    await close(again);
  });
}

test('tcp probe: GSLBD_TCP_PROBE=net forces the net.connect checker', () => {
  process.env[TCP_PROBE_ENV] = 'net';
  try {
    const checkers = createCheckers(log);
    assert.equal(tcpProbePath(checkers), 'net');
    assert.equal(checkers.tcp, tcpChecker);
  } finally {
    delete process.env[TCP_PROBE_ENV];
  }
  assert.equal(tcpProbePath(createCheckers(log)), 'native');
});

test('tcp probe (native): an address that is not a literal IP fails at once with EINVAL', async () => {
  const r = await native().check(target('not-an-ip', 80), AbortSignal.timeout(1000));
  assert.deepEqual(r, { ok: false, rttMs: 0, detail: 'connect EINVAL' });
});

test('tcp probe (native): IPv6 ::1', async (t) => {
  const srv = createServer((s) => s.destroy());
  const port = await listenIpv6OrSkip(t, srv);
  if (port === undefined) return;
  const up = await native().check(target('::1', port), AbortSignal.timeout(1000));
  assert.equal(up.ok, true, up.detail);
  // a scoped address is handed to net.connect, which resolves the scope
  const scoped = await native().check(target('::1%lo', port), AbortSignal.timeout(1000));
  assert.equal(scoped.ok, true, scoped.detail);
  await close(srv);
  const down = await native().check(target('::1', port), AbortSignal.timeout(1000));
  assert.match(down.detail, /ECONNREFUSED/);
});

test('tcp probe (native): thousands of concurrent probes are each reported once with their own result', async () => {
  const c = native();
  await probeManyAtOnce(c, 3000);
});

test('tcp probe (native): cancel ends a probe, queued or in flight, and it is never reported', async () => {
  const c = native();
  const srv = createServer((s) => s.destroy());
  const port = await listen(srv);
  let reported = 0;
  const queued = c.start(target('127.0.0.1', port), undefined, () => reported++);
  assert.ok(queued >= 0);
  assert.equal(c.inflight, 0, 'probes of a turn start together, after it');
  c.cancel(queued); // still in the start queue: skipped by the batch
  const h = c.start(target('127.0.0.1', port), undefined, () => reported++);
  c.prober.flush();
  assert.equal(c.inflight, 1, 'the cancelled probe was not started');
  c.cancel(h); // before the event loop polls: the connect may be done, the report must not come
  assert.equal(c.inflight, 0);
  c.cancel(h); // twice is harmless
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(reported, 0);
  // the ids are reused and still work
  const r = await c.check(target('127.0.0.1', port), AbortSignal.timeout(1000));
  assert.equal(r.ok, true, r.detail);
  await close(srv);
});

test('tcp probe (native): out of file descriptors, probes fail with `connect EMFILE` and all are reported', () => {
  // a child with a low descriptor limit (soft and hard: Node raises the soft limit to the hard one)
  const script = `
    import { nativeTcpChecker } from ${JSON.stringify(new URL('../../runtime/health/checkers/tcp-native.ts', import.meta.url).pathname)};
    import { createServer } from 'node:net';
    const c = nativeTcpChecker();
    const srv = createServer((s) => s.destroy()).listen(0, '127.0.0.1', async () => {
      const t = { key: 'k', poolId: 'p', ip: '127.0.0.1', port: srv.address().port, check: {}, checkKey: '', checkId: '' };
      const rs = await Promise.all(Array.from({ length: 400 }, () => c.check(t, AbortSignal.timeout(5000))));
      const by = {};
      for (const r of rs) by[r.detail] = (by[r.detail] ?? 0) + 1;
      console.log(JSON.stringify({ by, inflight: c.inflight }));
      srv.close();
    });`;
  const out = spawnSync('bash', ['-c', 'ulimit -n 200 && exec "$0" --import tsx --input-type=module -e "$1"', process.execPath, script], {
    encoding: 'utf8', timeout: 30_000,
  });
  assert.equal(out.status, 0, out.stderr);
  const { by, inflight } = JSON.parse(out.stdout.trim().split('\n').pop()!) as { by: Record<string, number>; inflight: number };
  assert.ok((by['connect EMFILE'] ?? 0) > 0, JSON.stringify(by));
  assert.ok((by.connected ?? 0) > 0, JSON.stringify(by));
  assert.equal((by['connect EMFILE'] ?? 0) + (by.connected ?? 0), 400, JSON.stringify(by));
  assert.equal(inflight, 0);
});

/** A real timeout on loopback: a listener whose full accept queue makes the kernel drop the SYN. */
test('tcp probe (native): a connect that never completes ends as `timeout` through the signal', async (t) => {
  if (!haveSilentListener()) {
    t.skip('python3 not available for the non-accepting listener');
    return;
  }
  const silent = await silentListener();
  try {
    const c = native();
    const started = Date.now();
    const r = await c.check(target('127.0.0.1', silent.port), AbortSignal.timeout(300));
    assert.deepEqual(r, { ok: false, rttMs: 0, detail: 'timeout' });
    assert.ok(Date.now() - started >= 250);
    assert.equal(c.inflight, 0, 'the timed-out probe was closed');
  } finally {
    silent.close();
  }
});

test('tcp probe (native): reused sockets connect afresh, reach the listener every time, and report a closed port', async () => {
  const c = native();
  const run = (t: CheckTarget) => c.check(t, AbortSignal.timeout(t.check.timeoutMs));
  // The listener runs in its own process, as members do: a listener inside the probing process
  // accepts only between the prober's turns and its backlog overflows under bursts. Its backlog
  // holds every connection of the test (1,000), so a child slowed down by a loaded machine cannot
  // make the kernel drop SYNs (a 1 s retransmit, longer than the probes' timeout).
  const code = "const n=require('net');let a=0;const s=n.createServer((c)=>{a++;c.destroy();});"
    + "s.listen({port:0,host:'127.0.0.1',backlog:1024},()=>console.log(s.address().port));process.stdin.on('data',()=>{console.log(a);});process.stdin.on('end',()=>process.exit(0));";
  const child = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiters: ((l: string) => void)[] = [];
  let pendingOut = '';
  child.stdout!.on('data', (d: Buffer) => {
    pendingOut += d.toString();
    for (let i = pendingOut.indexOf('\n'); i >= 0; i = pendingOut.indexOf('\n')) {
      const l = pendingOut.slice(0, i);
      pendingOut = pendingOut.slice(i + 1);
      const w = waiters.shift();
      if (w) w(l); else lines.push(l);
    }
  });
  const nextLine = () => new Promise<string>((r) => { const l = lines.shift(); if (l !== undefined) r(l); else waiters.push(r); });
  const port = Number(await nextLine());
  try {
    // Rounds of 200 concurrent probes: after the first round every probe runs on a pooled socket.
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all(Array.from({ length: 200 }, () => run(target('127.0.0.1', port))));
      assert.ok(results.every((r) => r.ok), `round ${round}: ${results.find((r) => !r.ok)?.detail}`);
      assert.ok(c.pooled >= 200, `round ${round}: the connected sockets went back to the pool (${c.pooled})`);
    }
    // the child counts what it accepted, as it gets to it
    let accepted = 0;
    await waitUntil('the listener to have accepted 1,000 connections', async () => {
      child.stdin!.write('?');
      accepted = Number(await nextLine());
      return accepted >= 1000;
    }, { everyMs: 50, describe: () => `accepted ${accepted}` });
    assert.equal(accepted, 1000, 'every probe, pooled socket or not, made a new connection');
  } finally {
    child.stdin!.end();
    await new Promise((r) => child.once('exit', r));
  }
  // The listener is gone: the same pooled sockets must now report the refusal, not a stale success.
  const refused = await Promise.all(Array.from({ length: 200 }, () => run(target('127.0.0.1', port))));
  assert.ok(refused.every((r) => !r.ok && /ECONNREFUSED/.test(r.detail)), refused.find((r) => r.ok || !/ECONNREFUSED/.test(r.detail))?.detail);
});
