/**
 * Three gslbd processes (own databases, API and DNS ports) and in-process reporter nodes on one
 * `nats-server -js`: flip propagation, the four policies, config sync with identical ids, a node
 * killed with SIGKILL catching up, the bus going away and coming back, users replicated as rows and
 * their sessions and TOTP steps honoured on every node.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startNats, stopAllNats, spawnGslbd, stopAllGslbd, call, waitFor, type GslbdNode, type NatsServer } from '../helpers/nats.js';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { authenticator } from 'otplib';
import { WAIT_CEILING_MS } from '../helpers/wait.js';

const KEY = 'k'.repeat(64);
const H = { authorization: `Bearer ${KEY}` };
const STATE = { enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '1500ms', config: { applyTimeout: '3s' } };
const ENV = { GSLB_API_KEY: KEY, GSLB_SECRET_KEY: '5'.repeat(64), GSLB_STATE_CATCHUP: '1s' };

let nats: NatsServer;
let a: GslbdNode, b: GslbdNode, c: GslbdNode;
const reporters: TestDaemon[] = [];

const get = (n: GslbdNode, path: string) => call(n.url, 'GET', path, undefined, H);
const post = (n: GslbdNode, path: string, body: unknown) => call(n.url, 'POST', path, body, H);
const pools = async (n: GslbdNode) => ((await get(n, '/api/v1/pools')).body as { id: string; name: string }[]).map((p) => `${p.id}:${p.name}`).sort();
const pct = (xs: number[], p: number) => { const s = [...xs].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!; };

before(async () => {
  nats = await startNats();
  const state = (policy: string) => ({ ...STATE, healthPolicy: policy, nats: { servers: [nats.url] } });
  [a, b, c] = await Promise.all([
    spawnGslbd('a', state('prefer-local'), {}, ENV),
    spawnGslbd('b', state('global-any-healthy'), {}, ENV),
    spawnGslbd('c', state('global-quorum'), {}, ENV),
  ]);
  process.env.GSLB_STATE_CATCHUP = '1s';
  for (const id of ['e1', 'e2', 'e3']) {
    reporters.push(await startTestDaemon({ node: { id }, cluster: { id: 'test-cluster' }, logging: { format: 'json', level: 'info' }, state: { ...STATE, enableConfigSync: false, healthPolicy: 'local-only', nats: { servers: [nats.url] } } }));
  }
});

after(async () => {
  for (const r of reporters) await r.stop().catch(() => undefined);
  await stopAllGslbd();
  await stopAllNats();
});

/** Emits a local flip on an in-process node the way the health monitor does. */
function flip(r: TestDaemon, poolId: string, ip: string, healthy: boolean): number {
  const timestamp = Date.now();
  const node = r.core.config.node.id;
  r.core.health.set(poolId, ip, { healthy, score: healthy ? 1 : 0, lastChecked: timestamp, rttMs: 3, node });
  r.core.bus.emit('health_transition', { poolId, ipAddress: ip, healthy, score: healthy ? 1 : 0, timestamp, rttMs: 3, node });
  return timestamp;
}

test('the cluster forms: every node sees the others live', async () => {
  for (const n of [a, b, c]) {
    await waitFor(`${n.id} sees 6 nodes`, async () => (await get(n, '/api/v1/cluster')).body.liveNodes.length === 6, 15_000);
  }
  const st = (await get(a, '/api/v1/cluster')).body;
  assert.deepEqual(st.liveNodes, ['a', 'b', 'c', 'e1', 'e2', 'e3']);
  assert.equal(st.connected, true);
  await waitFor('live-node gauge', async () => / 6$/m.test(await reporters[0]!.core.metrics.getSingleMetricAsString('gslbd_state_live_nodes')), 5_000);
});

// The target is "within 200 ms"; the times are printed here and measured by `npm run bench:cluster`
// (BENCHMARKS.md "Cluster"), not held to it: a loaded machine is no failure. The test holds that
// every flip reaches every node.
test('a flip on one node reaches the other nodes (p50/p99 printed)', async () => {
  const lat: number[] = [];
  const e1 = reporters[0]!;
  // peers' flips reach the local live feed as health_update with the reporting node
  const feed: string[] = [];
  const off = reporters[1]!.core.bus.on('ws_message', (m) => { if (m.type === 'health_update') feed.push((m.payload as { node: string }).node); });
  for (let i = 0; i < 30; i++) {
    const ts = flip(e1, 'lat-pool', '10.9.0.1', i % 2 === 0);
    for (const n of [a, b, c]) {
      const entry = await waitFor(`flip ${i} on ${n.id}`, async () => {
        const r = await get(n, '/api/v1/cluster/health?poolId=lat-pool&ipAddress=10.9.0.1');
        return (r.body.entries as { node: string; lastChecked: number; receivedAt: number }[]).find((e) => e.node === 'e1' && e.lastChecked === ts);
      }, WAIT_CEILING_MS, 2);
      lat.push(entry.receivedAt - ts);
    }
  }
  const p50 = pct(lat, 50), p99 = pct(lat, 99);
  console.log(`cluster flip propagation: n=${lat.length} p50=${p50} ms p99=${p99} ms max=${Math.max(...lat)} ms`);
  assert.ok(lat.every((ms) => ms >= 0), 'each flip was received after it was sent');
  off();
  assert.ok(feed.length >= 30 && feed.every((n) => n === 'e1'), `feed on e2: ${feed.length}`);
  const m = await e1.core.metrics.getSingleMetricAsString('gslbd_state_messages_published_total');
  assert.match(m, /type="health"[^\n]* (3\d|[4-9]\d|\d{3,})$/m, m);
  assert.match(await reporters[1]!.core.metrics.getSingleMetricAsString('gslbd_state_nats_connected'), / 1$/m);
});

test('a real TCP probe flip on one node reaches the others', async () => {
  const e3 = reporters[2]!;
  // reopening the closed port may meet it briefly held (EADDRINUSE): tried again for up to 5 s
  const open = async (port = 0): Promise<Server> => {
    for (let tries = 0; ; tries++) {
      const srv = createServer((sock) => sock.destroy());
      try {
        await new Promise<void>((resolve, reject) => { srv.once('error', reject); srv.listen(port, '127.0.0.1', () => resolve()); });
        return srv;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || tries >= 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  let srv = await open();
  const port = (srv.address() as { port: number }).port;
  try {
    const pool = (await api(e3.url, 'POST', '/api/v1/pools', { name: 'probed' })).body.id as string;
    assert.equal((await api(e3.url, 'POST', `/api/v1/pools/${pool}/members`, { ipAddress: '127.0.0.1', port })).status, 201);
    const hc = await api(e3.url, 'PUT', `/api/v1/pools/${pool}/healthcheck`, { type: 'tcp', port, intervalMs: 500, timeoutMs: 1000 });
    assert.ok(hc.status < 300, JSON.stringify(hc.body));
    const view = async () => (await get(a, `/api/v1/cluster/health?poolId=${pool}&ipAddress=127.0.0.1`)).body as { healthy: boolean; entries: { node: string; healthy: boolean }[] };
    // the first probe is no flip (a new target starts optimistically healthy), so its entry reaches
    // KV with e3's catch-up; the periodic one runs every 30 s, so the test runs it, as a connect would
    await waitFor('e3 reports healthy', async () => {
      await e3.core.ports.cluster!.catchUp();
      return (await view()).entries.some((e) => e.node === 'e3' && e.healthy);
    }, 30_000, 50).catch(async (err: Error) => {
      // what each side knew, for a failure that cannot be reproduced at will
      throw new Error(`${err.message}; e3 itself: ${JSON.stringify(e3.core.health.get(pool, '127.0.0.1'))}; a: ${JSON.stringify(await view())}`);
    });
    await new Promise<void>((r) => srv.close(() => r()));
    await waitFor('e3 flip to unhealthy seen on a', async () => { const v = await view(); return v.healthy === false && v.entries.some((e) => e.node === 'e3' && !e.healthy); }, 20_000, 20);
    srv = await open(port);
    await waitFor('recovery seen on a', async () => (await view()).healthy === true, 20_000, 20);
  } finally {
    srv.close();
  }
});

test('the four policies answer as their truth tables say', async () => {
  const [e1, e2, e3] = reporters as [TestDaemon, TestDaemon, TestDaemon];
  const verdicts = async () => Promise.all([a, b, c].map(async (n) => (await get(n, '/api/v1/cluster/health?poolId=pol&ipAddress=10.8.0.1')).body.healthy as boolean));
  const settle = async (want: boolean[], what: string) => {
    await waitFor(what, async () => JSON.stringify(await verdicts()) === JSON.stringify(want), 5_000);
  };
  // nobody reports: optimistic everywhere
  await settle([true, true, true], 'no reports');
  // e1 up, e2 down: prefer-local (no local on a) → any peer up; any → up; quorum 1/2 < 51 % → down
  flip(e1, 'pol', '10.8.0.1', true); flip(e2, 'pol', '10.8.0.1', false);
  await settle([true, true, false], 'e1 up e2 down');
  // e3 up: quorum 2/3 ≥ 51 %
  flip(e3, 'pol', '10.8.0.1', true);
  await settle([true, true, true], 'two of three up');
  // all down
  flip(e1, 'pol', '10.8.0.1', false); flip(e3, 'pol', '10.8.0.1', false);
  await settle([false, false, false], 'all down');
  // local-only on e1 ignores peers: e2 up does not make e1 answer
  flip(e2, 'pol', '10.8.0.1', true);
  await settle([true, true, false], 'only e2 up');
  assert.equal(e1.core.health.isHealthy('pol', '10.8.0.1'), false);
  assert.equal(e2.core.health.isHealthy('pol', '10.8.0.1'), true);
  // all reporters gone (graceful stop says goodbye): no live report left → optimistic again
  for (const r of reporters.splice(0)) await r.stop();
  await settle([true, true, true], 'all reporters gone');
});

test('a REST write on A appears on B and C with identical ids (convergence measured)', async () => {
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = Date.now();
    const p = await post(a, '/api/v1/pools', { name: `conv-${i}` });
    assert.equal(p.status, 201);
    await Promise.all([b, c].map((n) => waitFor(`pool ${i} on ${n.id}`, async () => (await get(n, `/api/v1/pools/${p.body.id}`)).status === 200, 5_000, 2)));
    times.push(Date.now() - t0);
  }
  console.log(`cluster config convergence (REST write on A until visible on B and C): n=${times.length} p50=${pct(times, 50)} ms p99=${pct(times, 99)} ms`);
  // a burst: writes made while an earlier one is still being published go out too
  const burst = await Promise.all(Array.from({ length: 8 }, (_v, i) => post(a, '/api/v1/pools', { name: `burst-${i}` })));
  await Promise.all([b, c].map((n) => waitFor(`burst on ${n.id}`, async () => {
    const have = await pools(n);
    return burst.every((r) => have.some((p) => p.startsWith(`${r.body.id}:`)));
  }, 5_000)));
  assert.equal((await get(a, '/api/v1/cluster')).body.config.outbox, 0);
  const m = await post(a, `/api/v1/pools/${(await get(a, '/api/v1/pools')).body[0].id}/members`, { ipAddress: '127.0.0.10', port: 80 });
  assert.equal(m.status, 201, JSON.stringify(m.body));
  await waitFor('members identical', async () => {
    const [x, y, z] = await Promise.all([a, b, c].map(pools));
    const mb = await get(b, `/api/v1/members/${m.body.id}`);
    return JSON.stringify(x) === JSON.stringify(y) && JSON.stringify(y) === JSON.stringify(z) && mb.status === 200 && mb.body.ipAddress === '127.0.0.10';
  });
});

test('a node killed with SIGKILL and restarted catches up; its git lease moves to another node', async () => {
  const leaders = async () => Promise.all([a, b, c].map(async (n) => (await get(n, '/api/v1/cluster')).body.gitLeader.holds as boolean));
  const held = await waitFor('one git leader', async () => { const l = await leaders(); return l.filter(Boolean).length === 1 && l; }, 5_000);
  const victim = [a, b, c][held.indexOf(true)]!;
  const others = [a, b, c].filter((n) => n !== victim) as [GslbdNode, GslbdNode];
  await victim.kill('SIGKILL');
  // the lease expires on the server after heartbeatTTL (1.5 s) and another node takes it
  await waitFor('lease taken over', async () => {
    const l = await Promise.all(others.map(async (n) => (await get(n, '/api/v1/cluster')).body.gitLeader.holds as boolean));
    return l.filter(Boolean).length === 1;
  }, 6_000, 100);
  const made: string[] = [];
  for (const n of [others[0], others[1], others[0]]) made.push((await post(n, '/api/v1/pools', { name: `while-dead-${made.length}` })).body.id);
  await victim.restart();
  await waitFor('restarted node caught up', async () => {
    const [x, y] = await Promise.all([pools(others[0]), pools(victim)]);
    return JSON.stringify(x) === JSON.stringify(y) && made.every((id) => y.some((p) => p.startsWith(`${id}:`)));
  }, 15_000);
  assert.equal((await leaders()).filter(Boolean).length, 1, 'still exactly one git leader');
  // every stream message applied once, in order, and no revision twice
  const db = new Database(join(victim.dir, 'gslbd.db'), { readonly: true });
  try {
    const dup = db.prepare('SELECT revision, COUNT(*) AS n FROM revisions GROUP BY revision HAVING n > 1').all();
    assert.deepEqual(dup, []);
    const seqs = (db.prepare('SELECT seq FROM cluster_applied ORDER BY seq').all() as { seq: number }[]).map((r) => r.seq);
    assert.deepEqual(seqs, seqs.map((_s, i) => i + 1), 'contiguous stream sequences');
  } finally { db.close(); }
});

test('with NATS stopped every node keeps answering (API and DNS), and they converge when it returns', async () => {
  const pool = (await post(a, '/api/v1/pools', { name: 'dns-pool' })).body.id as string;
  await post(a, `/api/v1/pools/${pool}/members`, { ipAddress: '192.0.2.10', port: 80 });
  const svc = await post(a, '/api/v1/services', { name: 'web', domain: 'www.cluster.test.', poolId: pool });
  assert.equal(svc.status, 201, JSON.stringify(svc.body));
  await waitFor('service on c', async () => (await get(c, `/api/v1/services/${svc.body.id}`)).status === 200);
  await nats.kill('SIGKILL');
  await Promise.all([a, b, c].map((n) => waitFor(`${n.id} notices`, async () => (await get(n, '/api/v1/cluster')).body.connected === false, 10_000)));
  for (const n of [a, b, c]) {
    assert.equal((await get(n, '/api/v1/pools')).status, 200);
    const out = execFileSync('dig', ['+short', '+time=2', '+tries=1', '-p', String(n.dnsPort), '@127.0.0.1', 'www.cluster.test', 'A'], { encoding: 'utf8' });
    assert.match(out, /192\.0\.2\.10/, `dns on ${n.id}`);
  }
  const offA = (await post(a, '/api/v1/pools', { name: 'offline-a' })).body.id as string;
  const offC = (await post(c, '/api/v1/pools', { name: 'offline-c' })).body.id as string;
  assert.ok(offA && offC);
  await nats.restart();
  await waitFor('all converge after the bus returns', async () => {
    const [x, y, z] = await Promise.all([a, b, c].map(pools));
    return JSON.stringify(x) === JSON.stringify(y) && JSON.stringify(y) === JSON.stringify(z) && x.some((p) => p.startsWith(`${offA}:`)) && x.some((p) => p.startsWith(`${offC}:`));
  }, 30_000, 100);
});

test('a user made on A reaches B and C: a session made on A works on C and ends everywhere after logout on B', async () => {
  // Users are `user` rows written by plans, so config sync carries them with the same id to every
  // node; the session itself travels only through KV SVC_SESSIONS. Nothing is copied by hand.
  const setup = await call(a.url, 'POST', '/api/v1/auth/setup', { email: 'admin@example.test', password: 'correct horse battery staple 1' });
  assert.equal(setup.status, 201, JSON.stringify(setup.body));
  const adminId = setup.body.userId as string;
  const onEvery = async (what: string, ok: (n: GslbdNode) => Promise<boolean>) =>
    Promise.all([a, b, c].map((n) => waitFor(`${what} on ${n.id}`, () => ok(n), 5_000)));
  await onEvery('the admin row', async (n) => (await get(n, `/api/v1/users/${adminId}`)).body?.email === 'admin@example.test');
  // "only while no user exists" now holds for the whole cluster
  for (const n of [b, c]) assert.equal((await call(n.url, 'POST', '/api/v1/auth/setup', { email: 'late@example.test', password: 'late-setup-pw-1' })).status, 404, n.id);

  const login = await call(a.url, 'POST', '/api/v1/auth/login', { email: 'admin@example.test', password: 'correct horse battery staple 1' });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  const bearer = { authorization: `Bearer ${login.body.token}` };
  for (const n of [a, c]) {
    const me = await call(n.url, 'GET', '/api/v1/auth/me', undefined, bearer);
    assert.equal(me.status, 200, `${n.id}: ${JSON.stringify(me.body)}`);
    assert.equal(me.body.userId, adminId);
  }
  // a user created through the API on A with the admin's session signs in on C
  const op = await call(a.url, 'POST', '/api/v1/users', { email: 'op@example.test', password: 'operator-pass-12', role: 'operator' }, bearer);
  assert.equal(op.status, 201, JSON.stringify(op.body));
  await onEvery('the operator row', async (n) => (await get(n, `/api/v1/users/${op.body.userId}`)).status === 200);
  const opLogin = await call(c.url, 'POST', '/api/v1/auth/login', { email: 'OP@example.test', password: 'operator-pass-12' });
  assert.equal(opLogin.status, 200, JSON.stringify(opLogin.body));
  const opBearer = { authorization: `Bearer ${opLogin.body.token}` };
  assert.equal((await call(a.url, 'GET', '/api/v1/auth/me', undefined, opBearer)).body.role, 'operator');

  assert.equal((await call(b.url, 'POST', '/api/v1/auth/logout', undefined, bearer)).status, 204);
  for (const n of [a, b, c]) assert.equal((await call(n.url, 'GET', '/api/v1/auth/me', undefined, bearer)).status, 401, `${n.id} after logout`);

  // deleting the operator on C ends its session on A too
  assert.equal((await call(c.url, 'DELETE', `/api/v1/users/${op.body.userId}`, undefined, H)).status, 204);
  await onEvery('the operator gone', async (n) => (await get(n, `/api/v1/users/${op.body.userId}`)).status === 404);
  assert.equal((await call(a.url, 'GET', '/api/v1/auth/me', undefined, opBearer)).status, 401);
});

test('TOTP enrolled on A signs in on C, and a code used on C is refused on B', async () => {
  const codeAt = (secret: string, at: number) => authenticator.clone({ epoch: at }).generate(secret);
  const u = await post(a, '/api/v1/users', { email: 'totp@example.test', password: 'totp-user-pass-1', role: 'viewer' });
  assert.equal(u.status, 201, JSON.stringify(u.body));
  const session = await call(a.url, 'POST', '/api/v1/auth/login', { email: 'totp@example.test', password: 'totp-user-pass-1' });
  const S = { authorization: `Bearer ${session.body.token}` };
  const enrol = await call(a.url, 'POST', '/api/v1/auth/totp/setup', undefined, S);
  assert.equal(enrol.status, 200, JSON.stringify(enrol.body));
  const now = Date.now();
  assert.equal((await call(a.url, 'POST', '/api/v1/auth/totp/verify', { code: codeAt(enrol.body.secret, now) }, S)).status, 200);
  for (const n of [b, c]) await waitFor(`TOTP on ${n.id}`, async () => (await get(n, `/api/v1/users/${u.body.userId}`)).body.totpEnabled === true, 5_000);
  // C opens the secret A sealed (the same GSLB_SECRET_KEY on every node); the enrolment step is used
  const seqBefore = (await get(b, '/api/v1/cluster')).body.config.lastSeq as number;
  const code = codeAt(enrol.body.secret, now + 30_000);
  const onC = await call(c.url, 'POST', '/api/v1/auth/login', { email: 'totp@example.test', password: 'totp-user-pass-1', totpCode: code });
  assert.equal(onC.status, 200, JSON.stringify(onC.body));
  // the used step is a plan too: once it reached B, the same code is a replay there
  await waitFor('the used step on b', async () => (await get(b, '/api/v1/cluster')).body.config.lastSeq > seqBefore, 5_000);
  const replay = await call(b.url, 'POST', '/api/v1/auth/login', { email: 'totp@example.test', password: 'totp-user-pass-1', totpCode: code });
  assert.equal(replay.status, 401);
  assert.deepEqual(replay.body, { error: 'this TOTP code was already used; wait for the next one', mfaRequired: true });
});
