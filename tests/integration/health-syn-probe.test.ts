import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { spawnSync } from 'node:child_process';
import { pino } from 'pino';
import { createCheckers, tcpProbePath } from '../../runtime/health/checkers/index.js';
import { NativeTcpChecker, nativeSynChecker, TCP_PROBE_ENV } from '../../runtime/health/checkers/tcp-native.js';
import type { CheckResult, CheckTarget } from '../../runtime/health/types.js';
import { haveSilentListener, resetDroppingListener, silentListener } from '../helpers/silent-listener.js';
import { close, listen, listenIpv6OrSkip, loopbackAddress, probeManyAtOnce, target } from '../helpers/tcp-probe-tools.js';
import { startTestDaemon, api } from '../helpers/daemon.js';
import { waitUntil } from '../helpers/wait.js';

// Half-open SYN probes (docs/health.md "Half-open SYN probes"). They need CAP_NET_RAW: without it
// these tests skip, except the one that checks the fallback itself.
delete process.env[TCP_PROBE_ENV];
const log = pino({ level: 'silent' });

const run = (c: NativeTcpChecker, t: CheckTarget) => c.check(t, AbortSignal.timeout(t.check.timeoutMs));

/** The SYN checker, or undefined (and the test skipped) without CAP_NET_RAW. */
function synOrSkip(t: { skip: (m: string) => void }): NativeTcpChecker | undefined {
  const c = nativeSynChecker();
  if (c instanceof NativeTcpChecker) return c;
  t.skip(c.message);
  return undefined;
}

/** The member's half-open entries (SYN-RECV) on `port`, as their peers' `address:port`. */
function synRecvPeers(port: number): string[] {
  const out = spawnSync('ss', ['-Htn', 'state', 'syn-recv', `sport = :${port}`], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return out.stdout.split('\n').filter((l) => l.trim()).map((l) => l.trim().split(/\s+/).pop()!);
}
const synRecv = (port: number) => synRecvPeers(port).length;

test('syn probe: up, refused after the listener closes, up again; the path is `syn`', async (t) => {
  const c = synOrSkip(t);
  if (!c) return;
  const checkers = createCheckers(log, { tcpProbe: 'syn' });
  assert.equal(tcpProbePath(checkers), 'syn');
  assert.equal(checkers.tcp, c);
  let accepted = 0;
  const srv = createServer((s) => { accepted++; s.destroy(); });
  const port = await listen(srv);
  const t0 = performance.now();
  const up = await run(c, target('127.0.0.1', port));
  const elapsed = performance.now() - t0;
  assert.deepEqual([up.ok, up.detail], [true, 'connected']);
  assert.ok(up.rttMs >= 0 && up.rttMs <= elapsed + 0.01, `the rtt is measured within the check (${up.rttMs} of ${elapsed} ms)`);
  await close(srv);
  const down = await run(c, target('127.0.0.1', port));
  assert.deepEqual(down, { ok: false, rttMs: 0, detail: 'connect ECONNREFUSED' });
  const again = createServer((s) => { accepted++; s.destroy(); });
  await listen(again, '127.0.0.1', port);
  assert.equal((await run(c, target('127.0.0.1', port))).ok, true);
  await close(again);
  assert.equal(accepted, 0, 'a half-open probe never completes a connection');
});

test('syn probe: the member keeps no half-open entry (the prober resets every SYN-ACK)', async (t) => {
  const c = synOrSkip(t);
  if (!c) return;
  const srv = createServer((s) => s.destroy());
  const port = await listen(srv, '0.0.0.0', 0, 4096);
  const rsts = c.prober.synStats()[5]!;
  const rs = await Promise.all(Array.from({ length: 300 }, (_, i) => run(c, target(loopbackAddress(i), port))));
  assert.ok(rs.every((r) => r.ok), rs.find((r) => !r.ok)?.detail);
  // the resets leave with the answers; without them the entries would stay for the SYN-ACK
  // retransmits (about a minute), past this wait's ceiling
  await waitUntil('no SYN-RECV entries left on the member', () => synRecv(port) === 0, { describe: () => synRecvPeers(port) });
  const stats = c.prober.synStats();
  assert.equal(stats[1], 0, 'no reply dropped');
  assert.ok(stats[5]! - rsts >= 300, `an RST from the prober for each SYN-ACK: ${stats[5]! - rsts}`);
  assert.equal(stats[6], 0, 'every RST sent');
  await close(srv);
});

test('syn probe: a lost RST costs no later probe (consecutive probes of a member use different source ports)', async (t) => {
  const c = synOrSkip(t);
  if (!c) return;
  if (!haveSilentListener()) {
    t.skip('python3 not available for the listener');
    return;
  }
  // Every RST to this listener is dropped, so each probe leaves its half-open entry behind. A SYN
  // on the 4-tuple of such an entry would get a bare ACK instead of a SYN-ACK (tcp_check_req: out
  // of window), and that probe would time out.
  const member = await resetDroppingListener();
  try {
    const [first, , , ports] = c.prober.synStats() as [number, number, number, number];
    assert.equal(ports, 16);
    const tgt = target('127.0.0.1', member.port, 500);
    const n = 6;
    for (let i = 0; i < n; i++) {
      const r = await run(c, tgt);
      assert.deepEqual([r.ok, r.detail], [true, 'connected'], `probe ${i + 1} of ${n}`);
    }
    const peers = synRecvPeers(member.port);
    assert.equal(peers.length, n, `one half-open entry per probe: ${peers.join(' ')}`);
    const sports = new Set(peers.map((p) => Number(p.split(':').pop())));
    assert.equal(sports.size, n, 'each probe on a 4-tuple of its own');
    for (const p of sports) assert.ok(p >= first && p < first + ports, `source port ${p} in ${first}+${ports}`);
  } finally {
    member.close();
  }
});

test('syn probe: thousands of concurrent probes are each reported once with their own result', async (t) => {
  const c = synOrSkip(t);
  if (!c) return;
  await probeManyAtOnce(c, 3000);
});

test('syn probe: no answer ends as `timeout`; a cancelled probe is never reported', async (t) => {
  const c = synOrSkip(t);
  if (!c) return;
  if (!haveSilentListener()) {
    t.skip('python3 not available for the non-accepting listener');
    return;
  }
  const silent = await silentListener();
  try {
    const started = Date.now();
    const r = await run(c, target('127.0.0.1', silent.port, 300));
    assert.deepEqual(r, { ok: false, rttMs: 0, detail: 'timeout' });
    assert.ok(Date.now() - started >= 250);
    assert.equal(c.inflight, 0);
  } finally {
    silent.close();
  }
  const srv = createServer((s) => s.destroy());
  const port = await listen(srv);
  let reported = 0;
  const h = c.start(target('127.0.0.1', port), undefined, () => reported++);
  c.prober.flush(); // the SYN is sent; its SYN-ACK is on its way
  assert.equal(c.inflight, 1);
  c.cancel(h);
  assert.equal(c.inflight, 0);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(reported, 0, 'the late SYN-ACK matched nothing');
  await close(srv);
});

test('syn probe: IPv6 members go through connect()', async (t) => {
  const c = synOrSkip(t);
  if (!c) return;
  const srv = createServer((s) => s.destroy());
  const port = await listenIpv6OrSkip(t, srv);
  if (port === undefined) return;
  let accepted = 0;
  srv.on('connection', () => accepted++);
  const up = await run(c, target('::1', port));
  assert.equal(up.ok, true, up.detail);
  await waitUntil('a full connection: the connect() path', () => accepted >= 1);
  assert.equal(accepted, 1, 'one connection');
  await close(srv);
  assert.match((await run(c, target('::1', port))).detail, /ECONNREFUSED/);
});

test('syn probe: without CAP_NET_RAW the SYN path is refused and TCP checks use connect()', (t) => {
  if (spawnSync('setpriv', ['--help']).status !== 0) {
    t.skip('setpriv not available to drop CAP_NET_RAW');
    return;
  }
  const script = `
    import { createCheckers, tcpProbePath } from ${JSON.stringify(new URL('../../runtime/health/checkers/index.ts', import.meta.url).pathname)};
    import { nativeSynChecker } from ${JSON.stringify(new URL('../../runtime/health/checkers/tcp-native.ts', import.meta.url).pathname)};
    import { createServer } from 'node:net';
    import { pino } from 'pino';
    const warnings = [];
    const log = pino({ level: 'warn' }, { write: (l) => warnings.push(JSON.parse(l)) });
    const syn = nativeSynChecker();
    const checkers = createCheckers(log, { tcpProbe: 'syn' });
    createCheckers(log, { tcpProbe: 'syn' });
    const srv = createServer((s) => s.destroy()).listen(0, '127.0.0.1', async () => {
      const t = { key: 'k', poolId: 'p', ip: '127.0.0.1', port: srv.address().port, check: {}, checkKey: '', checkId: '' };
      const r = await checkers.tcp.check(t, AbortSignal.timeout(2000));
      console.log(JSON.stringify({ syn: syn instanceof Error ? syn.message : 'open', path: tcpProbePath(checkers), ok: r.ok, warnings: warnings.map((w) => w.msg + ': ' + w.err) }));
      srv.close();
    });`;
  const out = spawnSync('setpriv', ['--bounding-set=-net_raw', '--inh-caps=-net_raw', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8', timeout: 30_000, cwd: new URL('../..', import.meta.url).pathname,
  });
  assert.equal(out.status, 0, out.stderr);
  const r = JSON.parse(out.stdout.trim().split('\n').pop()!) as { syn: string; path: string; ok: boolean; warnings: string[] };
  assert.match(r.syn, /EPERM \(needs CAP_NET_RAW\)/);
  assert.equal(r.path, 'native');
  assert.equal(r.ok, true);
  assert.deepEqual(r.warnings, ['half-open SYN probes unavailable; TCP checks use connect(): half-open SYN probes unavailable: EPERM (needs CAP_NET_RAW)'], 'one warning');
});

test('syn probe: when its source address goes away, the next probe uses the new one (rtnetlink empties the source cache)', (t) => {
  if (!(nativeSynChecker() instanceof NativeTcpChecker)) {
    t.skip('no CAP_NET_RAW');
    return;
  }
  if (spawnSync('unshare', ['-n', 'true']).status !== 0) {
    t.skip('cannot create a network namespace (unshare -n)');
    return;
  }
  // In a network namespace of its own: 127.0.0.5 is reached from 10.77.0.1 (a more specific local
  // route); probe it, remove that address and route (the source becomes 127.0.0.1) and probe again.
  // A SYN still sent from the vanished address gets its SYN-ACK routed nowhere (a timeout).
  const script = `
    import { createServer } from 'node:net';
    import { spawnSync } from 'node:child_process';
    import { nativeSynChecker } from ${JSON.stringify(new URL('../../runtime/health/checkers/tcp-native.ts', import.meta.url).pathname)};
    const sh = (c) => { const r = spawnSync('sh', ['-c', c], { encoding: 'utf8' }); if (r.status !== 0) throw new Error(c + ': ' + r.stderr); return r.stdout; };
    sh('ip link set lo up && ip addr add 10.77.0.1/32 dev lo && ip route add local 127.0.0.5/32 dev lo src 10.77.0.1 table local');
    const c = nativeSynChecker();
    const srv = createServer((s) => s.destroy()).listen(0, '0.0.0.0', async () => {
      const t = { key: 'k', poolId: 'p', ip: '127.0.0.5', port: srv.address().port, check: {}, checkKey: '', checkId: '' };
      const out = { before: sh('ip route get 127.0.0.5'), first: await c.check(t, AbortSignal.timeout(500)) };
      sh('ip route del local 127.0.0.5/32 dev lo table local && ip addr del 10.77.0.1/32 dev lo');
      await new Promise((r) => setTimeout(r, 100));
      out.after = sh('ip route get 127.0.0.5');
      out.second = await c.check(t, AbortSignal.timeout(500));
      console.log(JSON.stringify(out));
      srv.close();
    });`;
  const out = spawnSync('unshare', ['-n', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8', timeout: 30_000, cwd: new URL('../..', import.meta.url).pathname,
  });
  assert.equal(out.status, 0, out.stderr);
  const r = JSON.parse(out.stdout.trim().split('\n').pop()!) as { before: string; after: string; first: CheckResult; second: CheckResult };
  assert.match(r.before, /src 10\.77\.0\.1/);
  assert.match(r.after, /src 127\.0\.0\.1/, 'the source address really changed');
  assert.equal(r.first.ok, true, r.first.detail);
  assert.equal(r.second.ok, true, `after the change: ${r.second.detail}`);
});

test('daemon: health.tcpProbeMode syn probes members half-open; a closed port flips them down and back', async (t) => {
  if (!(nativeSynChecker() instanceof NativeTcpChecker)) {
    t.skip('no CAP_NET_RAW');
    return;
  }
  let srv = createServer((s) => s.destroy());
  const port = await listen(srv, '127.0.0.21');
  const d = await startTestDaemon({ health: { tcpProbeMode: 'syn' } });
  t.after(async () => { await d.stop(); if (srv.listening) await close(srv); });
  assert.equal(d.core.ports.tcpProbePath, 'syn');
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'web' })).body as { id: string };
  await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '127.0.0.21', port: 80 });
  assert.equal((await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'tcp', port, intervalMs: 200, timeoutMs: 100 })).status, 200);
  const entry = () => d.core.health.get(pool.id, '127.0.0.21');
  const waitFor = (want: boolean, what: string) => waitUntil(what, () => { const e = entry(); return e !== undefined && e.lastChecked > 0 && e.healthy === want; }, { describe: () => entry() });
  await waitFor(true, 'a first healthy probe');
  await close(srv);
  await waitFor(false, 'the closed port to flip the member down');
  srv = createServer((s) => s.destroy());
  await listen(srv, '127.0.0.21', port);
  await waitFor(true, 'the reopened port to flip it up');
});
