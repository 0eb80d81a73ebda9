import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { stopHttpMember } from '../helpers/http-member.js';
import { startStaticBackends } from '../helpers/static-backends.js';
import { tenantKey } from '../helpers/tenants.js';
import { waitFor } from '../helpers/proc.js';
import { openFeed, type Feed } from '../helpers/ws-feed.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';

// The config file's static endpoints (`loadbalancer.endpoints`) shown as the read-only pool
// `static` (docs/api.md "The static pool"): in the snapshot, the pools routes, the status routes
// and the live feed, health included; refused for writes with 409; the system's, like git rows.

const SYS = randomBytes(32).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
const A = '127.0.0.93';
const B = '127.0.0.94';
/** generous ceiling for conditions the checker reaches in a few 100 ms intervals */
const CEILING = 60_000;

let d: TestDaemon;
let port: number;
let servers: Map<string, Server>;
let feed: Feed;
let other: Record<string, string>;
let otherFeed: Feed;

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = sys) => api(d.url, method, `/api/v1${path}`, body, headers);

before(async () => {
  ({ port, servers } = await startStaticBackends([A, B]));
  d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'static.example.test.' },
    loadbalancer: { endpoints: [A, B] },
    health: { enabled: true, type: 'http', port, checkinterval: '100ms', timeout: '80ms', http: { path: '/', expectedstatus: 200 } },
  } as never, { GSLB_API_KEY: SYS });
  other = await tenantKey(d, 'other', sys);
  feed = await openFeed(d, sys);
  otherFeed = await openFeed(d, other);
  // both probed at least once: the entries the snapshot shows come from real probes
  await waitFor(() => [A, B].every((ip) => (d.core.health.get('static', ip)?.lastChecked ?? 0) > 0), CEILING);
});
after(async () => {
  feed?.close();
  otherFeed?.close();
  await d?.stop();
  for (const s of servers?.values() ?? []) await stopHttpMember(s);
});

test('the static endpoints are pool "static" in the pools routes, with their members, check and status', async () => {
  const pools = await call('GET', '/pools');
  assert.equal(pools.status, 200);
  assert.deepEqual(pools.body, [{ id: 'static', name: 'static', origin: 'config', revision: 'config', source: 'loadbalancer.endpoints' }]);
  assert.deepEqual((await call('GET', '/pools/static')).body, pools.body[0]);
  const members = await call('GET', '/pools/static/members');
  assert.deepEqual(members.body.map((m: Record<string, unknown>) => [m.id, m.poolId, m.ipAddress, m.port, m.weight, m.enabled, m.origin]),
    [[`static:${A}`, 'static', A, port, 1, true, 'config'], [`static:${B}`, 'static', B, port, 1, true, 'config']]);
  assert.equal((await call('GET', `/members/static:${A}`)).body.ipAddress, A);
  const hc = await call('GET', '/pools/static/healthcheck');
  assert.deepEqual([hc.status, hc.body.type, hc.body.port, hc.body.intervalMs, hc.body.timeoutMs, hc.body.origin], [200, 'http', port, 100, 80, 'config']);
  assert.deepEqual((await call('GET', '/pools/static/georules')).body, []);
  const status = await call('GET', '/pools/static/status');
  assert.deepEqual(status.body.map((s: Record<string, unknown>) => [s.memberId, s.ipAddress, s.port, s.healthy, s.score]), [[`static:${A}`, A, port, true, 1], [`static:${B}`, B, port, true, 1]]);
  assert.ok(status.body.every((s: { lastChecked: number }) => s.lastChecked > 0), 'probed');
  // nothing of it is a stored row
  assert.equal(rowsOf(d.core.holder.current, 'pool').size, 0);
  assert.equal((await call('GET', '/pools/nope')).status, 404);
});

test('the snapshot document and the statistics hold the static pool, its members and their health', async () => {
  const snap = await call('GET', '/snapshot');
  assert.equal(snap.status, 200);
  assert.deepEqual(snap.body.pools.map((p: { id: string }) => p.id), ['static']);
  assert.deepEqual(snap.body.members.static.map((m: { ipAddress: string }) => m.ipAddress), [A, B]);
  assert.deepEqual(Object.keys(snap.body.healthStatus.static).sort(), [A, B]);
  for (const ip of [A, B]) {
    const e = snap.body.healthStatus.static[ip];
    assert.equal(e.healthy, true, ip);
    assert.equal(e.score, 1, ip);
    assert.ok(e.lastChecked > 0, ip);
  }
  assert.deepEqual(snap.body.geoRules, { static: [] });
  assert.deepEqual([snap.body.stats.totalPools, snap.body.stats.totalMembers, snap.body.stats.healthyMembers], [1, 2, 2]);
  const stats = (await call('GET', '/dashboard/stats')).body;
  assert.deepEqual([stats.totalPools, stats.totalMembers], [1, 2]);
});

test('the live feed lists the static members on connect', async () => {
  const snapshot = feed.msgs.filter((m) => m.type === 'member_update' && m.payload.action === 'snapshot');
  assert.deepEqual(snapshot.map((m) => [m.payload.poolId, m.payload.member.id]), [['static', `static:${A}`], ['static', `static:${B}`]]);
});

test('REST writes to the static pool, its members and its check answer 409 naming the config file; nothing changes', async () => {
  const rows: { name: string; method: string; path: string; body?: unknown; error: RegExp }[] = [
    { name: 'rename', method: 'PUT', path: '/pools/static', body: { name: 'x' }, error: /^pool "static" is read-only: it comes from the config file \(loadbalancer\.endpoints\); change it there/ },
    { name: 'delete', method: 'DELETE', path: '/pools/static', error: /^pool "static" is read-only: .*loadbalancer\.endpoints.*delete it there/ },
    { name: 'add a member', method: 'POST', path: '/pools/static/members', body: { ipAddress: '127.0.0.95', port: 80 }, error: /^pool "static" is read-only: .*loadbalancer\.endpoints/ },
    { name: 'change a member', method: 'PUT', path: `/members/static:${A}`, body: { enabled: false }, error: new RegExp(`^member ${A.replace(/\./g, '\\.')}:${port} is read-only: .*loadbalancer\\.endpoints`) },
    { name: 'delete a member', method: 'DELETE', path: `/members/static:${A}`, error: /is read-only: .*loadbalancer\.endpoints/ },
    { name: 'replace the check', method: 'PUT', path: '/pools/static/healthcheck', body: { type: 'tcp', port: 1 }, error: /^healthcheck of pool static is read-only: it comes from the config file \(health\)/ },
    { name: 'delete the check', method: 'DELETE', path: '/pools/static/healthcheck', error: /^healthcheck of pool static is read-only: .*\(health\)/ },
    { name: 'add a geo rule', method: 'POST', path: '/pools/static/georules', body: { cidr: '10.0.0.0/8', endpoint: A }, error: /^pool "static" is read-only/ },
  ];
  for (const r of rows) {
    const res = await call(r.method, r.path, r.body);
    assert.equal(res.status, 409, r.name);
    assert.match(res.body.error, r.error, r.name);
  }
  // a service cannot point at it (DNS serves it for dns.domain only)
  const svc = await call('POST', '/services', { name: 's', domain: 'svc.static.example.test.', poolId: 'static' });
  assert.equal(svc.status, 400);
  assert.match(svc.body.error, /^poolId: pool static is the config file's loadbalancer\.endpoints/);
  assert.equal(rowsOf(d.core.holder.current, 'pool').size + rowsOf(d.core.holder.current, 'member').size + rowsOf(d.core.holder.current, 'service').size, 0);
  assert.equal((await call('GET', '/pools/static/members')).body.length, 2);
});

test('the system\'s tenant (default, where the config repo\'s rows are) sees the static pool and is refused writes', async () => {
  const k = await api(d.url, 'POST', '/api/v1/tenants/default/apikeys', { name: 'static-pool' }, sys);
  assert.equal(k.status, 201);
  const own = { authorization: `Bearer ${k.body.key as string}` };
  assert.deepEqual((await call('GET', '/pools', undefined, own)).body.map((p: { id: string }) => p.id), ['static']);
  assert.equal((await call('GET', '/snapshot', undefined, own)).body.stats.totalMembers, 2);
  assert.equal((await call('DELETE', '/pools/static', undefined, own)).status, 409);
});

test('another tenant does not see the static pool: not listed, 404, not in its snapshot or statistics', async () => {
  assert.deepEqual((await call('GET', '/pools', undefined, other)).body, []);
  for (const [method, path] of [['GET', '/pools/static'], ['GET', '/pools/static/status'], ['GET', `/members/static:${A}`], ['GET', `/members/static:${A}/status`], ['PUT', '/pools/static'], ['DELETE', `/members/static:${A}`]] as const) {
    const res = await call(method, path, method === 'PUT' ? { name: 'x' } : undefined, other);
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.doesNotMatch(JSON.stringify(res.body), /loadbalancer|config file/, `${method} ${path}`);
  }
  const snap = (await call('GET', '/snapshot', undefined, other)).body;
  assert.deepEqual([snap.pools, snap.healthStatus, snap.stats.totalPools, snap.stats.totalMembers], [[], {}, 0, 0]);
  assert.equal(otherFeed.msgs.filter((m) => m.type === 'member_update').length, 0);
});

test('a backend that stops flips its member: the feed carries the pool id, the snapshot and status follow, other tenants hear nothing', async () => {
  await stopHttpMember(servers.get(B));
  servers.delete(B);
  const down = await feed.next((m) => m.type === 'health_update' && m.payload.poolId === 'static' && m.payload.ipAddress === B && m.payload.healthy === false);
  assert.equal(down.payload.score, 0);
  assert.equal(down.payload.node, 'test-node');
  const snap = (await call('GET', '/snapshot')).body;
  // the snapshot document is cached for up to a second while health is unchanged: the flip changed it
  assert.equal(snap.healthStatus.static[B].healthy, false);
  assert.equal(snap.healthStatus.static[A].healthy, true);
  assert.deepEqual([snap.stats.healthyMembers, snap.stats.unhealthyMembers], [1, 1]);
  const st = (await call('GET', `/members/static:${B}/status`)).body;
  assert.deepEqual([st.healthy, st.poolId], [false, 'static']);
  // the other tenant's feed: a message of its own sent after the flip arrives, the flip never did
  const mine = (await call('POST', '/pools', { name: 'marker' }, other)).body;
  await otherFeed.next((m) => m.type === 'pool_update' && m.payload.pool.id === mine.id);
  assert.equal(otherFeed.msgs.filter((m) => m.type === 'health_update').length, 0);
});
