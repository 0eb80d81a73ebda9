import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';

let d: TestDaemon;
const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => api(d.url, method, `/api/v1${path}`, body, headers);

before(async () => { d = await startTestDaemon({}, { GSLB_AUDIT_LOG: '' }); });
after(async () => { await d.stop(); });

async function newPool(name = 'web') {
  const r = await call('POST', '/pools', { name });
  assert.equal(r.status, 201);
  return r.body.id as string;
}

test('GET /health answers 200 {status}', async () => {
  const r = await call('GET', '/health');
  assert.equal(r.status, 200);
  assert.equal(typeof r.body.status, 'string');
});

test('pools: create, list, get, rename, delete, and their errors', async () => {
  const created = await call('POST', '/pools', { name: 'eu' });
  assert.equal(created.status, 201);
  assert.equal(created.body.name, 'eu');
  assert.equal(typeof created.body.id, 'string');
  const id = created.body.id as string;
  for (const bad of [{}, { name: '' }, { name: 5 }]) {
    const r = await call('POST', '/pools', bad);
    assert.equal(r.status, 400, JSON.stringify(bad));
    assert.equal(typeof r.body.error, 'string');
  }
  const list = await call('GET', '/pools');
  assert.equal(list.status, 200);
  assert.ok(list.body.some((p: { id: string }) => p.id === id));
  assert.deepEqual((await call('GET', `/pools/${id}`)).body.name, 'eu');
  assert.equal((await call('GET', '/pools/nope')).status, 404);
  const renamed = await call('PUT', `/pools/${id}`, { name: 'europe' });
  assert.equal(renamed.status, 200);
  assert.equal(renamed.body.name, 'europe');
  assert.equal((await call('PUT', `/pools/${id}`, {})).status, 400);
  assert.equal((await call('PUT', `/pools/${id}`, { name: '' })).status, 400);
  assert.equal((await call('PUT', '/pools/nope', { name: 'x' })).status, 404);
  const del = await call('DELETE', `/pools/${id}`);
  assert.equal(del.status, 204);
  assert.equal((await call('GET', `/pools/${id}`)).status, 404);
  assert.equal((await call('DELETE', `/pools/${id}`)).status, 404);
});

test('members: defaults on create, update rules, errors', async () => {
  const pool = await newPool();
  const r = await call('POST', `/pools/${pool}/members`, { ipAddress: '10.0.0.1', port: 80, weight: 0 });
  assert.equal(r.status, 201);
  assert.deepEqual([r.body.poolId, r.body.weight, r.body.priority, r.body.enabled], [pool, 1, 0, true], 'weight 0 → 1, priority 0, enabled true');
  const neg = await call('POST', `/pools/${pool}/members`, { ipAddress: '2001:db8::1', port: 443, weight: -5, priority: 2 });
  assert.equal(neg.status, 201);
  assert.deepEqual([neg.body.weight, neg.body.priority], [1, 2], 'weight ≤ 0 → 1 on create');
  const id = r.body.id as string;
  for (const bad of [{ ipAddress: '10.0.0', port: 80 }, { ipAddress: '10.0.0.2', port: 0 }, { ipAddress: '10.0.0.2', port: 65536 }, { ipAddress: '10.0.0.2' }, { port: 80 }, { ipAddress: '10.0.0.2', port: '80' }]) {
    const b = await call('POST', `/pools/${pool}/members`, bad);
    assert.equal(b.status, 400, JSON.stringify(bad));
    assert.equal(typeof b.body.error, 'string');
  }
  assert.equal((await call('POST', '/pools/nope/members', { ipAddress: '10.0.0.2', port: 80 })).status, 404);
  const list = await call('GET', `/pools/${pool}/members`);
  assert.deepEqual(list.body.map((m: { id: string }) => m.id), [id, neg.body.id]);
  assert.equal((await call('GET', `/members/${id}`)).body.ipAddress, '10.0.0.1');
  assert.equal((await call('GET', '/members/nope')).status, 404);
  const upd = await call('PUT', `/members/${id}`, { weight: -3, priority: 1, enabled: false, rumUrl: 'https://probe.example/rum.gif' });
  assert.equal(upd.status, 200);
  assert.deepEqual([upd.body.weight, upd.body.priority, upd.body.enabled, upd.body.rumUrl], [0, 1, false, 'https://probe.example/rum.gif'], 'negative weight → 0 on update');
  const keep = await call('PUT', `/members/${id}`, { enabled: true });
  assert.deepEqual([keep.body.weight, keep.body.priority, keep.body.enabled], [0, 1, true], 'unsent fields keep their values');
  assert.equal((await call('PUT', '/members/nope', { weight: 1 })).status, 404);
  assert.equal((await call('PUT', `/members/${id}`, { rumUrl: 'ftp://x' })).status, 400);
  assert.equal((await call('DELETE', `/members/${id}`)).status, 204);
  assert.equal((await call('DELETE', `/members/${id}`)).status, 404);
  assert.equal((await call('GET', `/pools/${pool}/members`)).body.length, 1);
});

test('a duplicate ip:port in one pool is a 409', async () => {
  const pool = await newPool();
  assert.equal((await call('POST', `/pools/${pool}/members`, { ipAddress: '10.1.0.1', port: 80 })).status, 201);
  const dup = await call('POST', `/pools/${pool}/members`, { ipAddress: '10.1.0.1', port: 80 });
  assert.equal(dup.status, 409);
  assert.match(dup.body.error, /already has a member 10\.1\.0\.1:80/);
});

test('services: defaults, aliases, validation and errors', async () => {
  const pool = await newPool();
  const r = await call('POST', '/services', { name: 'app', domain: 'app.example.com.', poolId: pool });
  assert.equal(r.status, 201);
  assert.deepEqual([r.body.name, r.body.domain, r.body.algorithm, r.body.poolId, r.body.ttl], ['app', 'app.example.com.', 'round-robin', pool, 60]);
  for (const [alias, canonical] of [['wrr', 'weighted-round-robin'], ['weighted_rr', 'weighted-round-robin'], ['geoip', 'geo-ip'], ['mapfile', 'map-file'], ['failover', 'failover'], ['asn', 'asn']]) {
    const s = await call('POST', '/services', { name: alias, domain: `${alias.replace('_', '-')}.example.com.`, algorithm: alias });
    assert.equal(s.status, 201, alias);
    assert.equal(s.body.algorithm, canonical);
    assert.equal(s.body.poolId, null);
  }
  for (const bad of [
    { domain: 'x.example.com.' }, { name: 'x' }, { name: '', domain: 'x.example.com.' },
    { name: 'x', domain: 'x.example.com' }, { name: 'x', domain: 'bad..example.' }, { name: 'x', domain: 'y.example.com.', algorithm: 'random' },
    { name: 'x', domain: 'y.example.com.', ttl: -1 }, { name: 'x', domain: 'y.example.com.', poolId: 'nope' },
  ]) {
    const b = await call('POST', '/services', bad);
    assert.equal(b.status, 400, JSON.stringify(bad));
    assert.equal(typeof b.body.error, 'string');
  }
  const id = r.body.id as string;
  assert.equal((await call('GET', '/services')).status, 200);
  assert.equal((await call('GET', `/services/${id}`)).body.domain, 'app.example.com.');
  assert.equal((await call('GET', '/services/nope')).status, 404);
  const upd = await call('PUT', `/services/${id}`, { name: 'app2', domain: 'app2.example.com.', algorithm: 'failover', ttl: 30, poolId: null, chain: ['geo-ip', 'rum-latency'], whenAllUnhealthy: 'servfail' });
  assert.equal(upd.status, 200);
  assert.deepEqual([upd.body.name, upd.body.algorithm, upd.body.ttl, upd.body.poolId, upd.body.chain, upd.body.whenAllUnhealthy], ['app2', 'failover', 30, null, ['geo-ip', 'rum'], 'servfail']);
  assert.equal((await call('PUT', `/services/${id}`, { name: 'x' })).status, 400);
  assert.equal((await call('PUT', `/services/${id}`, { domain: 'x.example.' })).status, 400);
  assert.equal((await call('PUT', '/services/nope', { name: 'x', domain: 'x.example.' })).status, 404);
  const clash = await call('POST', '/services', { name: 'dup', domain: 'APP2.example.com.' });
  assert.equal(clash.status, 409, 'a domain is served by one service (case-insensitive)');
  assert.equal((await call('DELETE', `/services/${id}`)).status, 204);
  assert.equal((await call('DELETE', `/services/${id}`)).status, 404);
});

test('health check: upsert with defaults for zero values, read, delete, 404s', async () => {
  const pool = await newPool();
  assert.equal((await call('GET', `/pools/${pool}/healthcheck`)).status, 404);
  assert.equal((await call('DELETE', `/pools/${pool}/healthcheck`)).status, 404);
  const r = await call('PUT', `/pools/${pool}/healthcheck`, { port: 0, intervalMs: 0, timeoutMs: 0, httpPath: '', type: 'http', httpExpectedStatus: 0 });
  assert.equal(r.status, 200);
  assert.deepEqual(
    [r.body.type, r.body.port, r.body.intervalMs, r.body.timeoutMs, r.body.httpPath, r.body.httpHost, r.body.httpExpectedStatus, r.body.httpContains, r.body.tls, r.body.insecureSkipVerify, r.body.scoreWindow, r.body.icmpCount, r.body.webhookMethod],
    ['http', 80, 10000, 2000, '/', '', 0, '', false, false, 0, 3, 'POST'],
  );
  const empty = await call('PUT', `/pools/${pool}/healthcheck`, {});
  assert.deepEqual([empty.body.type, empty.body.httpExpectedStatus, empty.body.id], ['tcp', 200, r.body.id], 'upsert keeps the one check of the pool');
  assert.equal((await call('PUT', `/pools/${pool}/healthcheck`, { type: 'udp' })).status, 400);
  assert.equal((await call('PUT', `/pools/${pool}/healthcheck`, { port: 70000 })).status, 400);
  assert.equal((await call('PUT', '/pools/nope/healthcheck', {})).status, 404);
  assert.equal((await call('GET', `/pools/${pool}/healthcheck`)).body.type, 'tcp');
  assert.equal((await call('DELETE', `/pools/${pool}/healthcheck`)).status, 204);
  assert.equal((await call('GET', `/pools/${pool}/healthcheck`)).status, 404);
});

test('geo rules: create, list, delete, validation', async () => {
  const pool = await newPool();
  const r = await call('POST', `/pools/${pool}/georules`, { cidr: '10.0.0.0/8', endpoint: '192.0.2.1', priority: 5 });
  assert.equal(r.status, 201);
  assert.deepEqual([r.body.poolId, r.body.cidr, r.body.endpoint, r.body.priority], [pool, '10.0.0.0/8', '192.0.2.1', 5]);
  for (const bad of [{ cidr: '10.0.0.0/33', endpoint: '192.0.2.1' }, { cidr: '10.0.0.0', endpoint: '192.0.2.1' }, { cidr: '10.0.0.0/8', endpoint: 'x' }, { cidr: '10.0.0.0/8' }]) {
    assert.equal((await call('POST', `/pools/${pool}/georules`, bad)).status, 400, JSON.stringify(bad));
  }
  assert.equal((await call('POST', '/pools/nope/georules', { cidr: '10.0.0.0/8', endpoint: '192.0.2.1' })).status, 404);
  assert.equal((await call('GET', `/pools/${pool}/georules`)).body.length, 1);
  assert.equal((await call('DELETE', `/georules/${r.body.id}`)).status, 204);
  assert.equal((await call('DELETE', `/georules/${r.body.id}`)).status, 404);
  assert.deepEqual((await call('GET', `/pools/${pool}/georules`)).body, []);
});

test('deleting a pool cascades to members, health check and geo rules', async () => {
  const pool = await newPool();
  const m = await call('POST', `/pools/${pool}/members`, { ipAddress: '10.2.0.1', port: 80 });
  await call('PUT', `/pools/${pool}/healthcheck`, {});
  const g = await call('POST', `/pools/${pool}/georules`, { cidr: '10.0.0.0/8', endpoint: '10.2.0.1' });
  const svc = await call('POST', '/services', { name: 'casc', domain: 'casc.example.com.', poolId: pool });
  assert.equal((await call('DELETE', `/pools/${pool}`)).status, 204);
  assert.equal((await call('GET', `/members/${m.body.id}`)).status, 404);
  assert.equal((await call('GET', `/pools/${pool}/healthcheck`)).status, 404);
  assert.equal((await call('DELETE', `/georules/${g.body.id}`)).status, 404);
  assert.equal((await call('GET', `/services/${svc.body.id}`)).body.poolId, null, 'the service is detached, not deleted');
});

test('status of a pool and of a member', async () => {
  const pool = await newPool();
  const m = await call('POST', `/pools/${pool}/members`, { ipAddress: '10.3.0.1', port: 80 });
  const ps = await call('GET', `/pools/${pool}/status`);
  assert.equal(ps.status, 200);
  assert.equal(ps.body.length, 1);
  assert.deepEqual([ps.body[0].healthy, ps.body[0].score, ps.body[0].ipAddress], [true, 1, '10.3.0.1']);
  const ms = await call('GET', `/members/${m.body.id}/status`);
  assert.deepEqual([ms.status, ms.body.healthy, ms.body.score], [200, true, 1]);
  // A stored status (e.g. written by a checker on another run) is served when no live checker reports.
  d.core.healthStore.write(pool, '10.3.0.1', { healthy: false, score: 0.25, lastChecked: 1700000000000, rttMs: 3, node: 'n2' });
  d.core.health.set(pool, '10.3.0.1', { healthy: false, score: 0.25, lastChecked: 1700000000000, rttMs: 3, node: 'n2' });
  const after = await call('GET', `/members/${m.body.id}/status`);
  assert.deepEqual([after.body.healthy, after.body.score, after.body.node], [false, 0.25, 'n2']);
  assert.equal((await call('GET', '/pools/nope/status')).status, 404);
  assert.equal((await call('GET', '/members/nope/status')).status, 404);
});

test('dashboard stats and snapshot document', async () => {
  const stats = await call('GET', '/dashboard/stats');
  assert.equal(stats.status, 200);
  for (const k of ['totalPools', 'totalMembers', 'healthyMembers', 'unhealthyMembers', 'totalServices', 'totalGeoRules', 'uptimeSeconds', 'webSocketClients']) {
    assert.ok(Number.isInteger(stats.body[k]), k);
  }
  assert.equal(stats.body.totalMembers, stats.body.healthyMembers + stats.body.unhealthyMembers);
  const snap = await call('GET', '/snapshot');
  assert.equal(snap.status, 200);
  assert.ok(Array.isArray(snap.body.pools) && Array.isArray(snap.body.services));
  for (const k of ['members', 'healthStatus', 'geoRules']) assert.equal(typeof snap.body[k], 'object', k);
  assert.ok(Number.isInteger(snap.body.timestamp));
  assert.equal(snap.body.stats.totalPools, snap.body.pools.length);
});

test('bad input gets a 4xx {error} and changes nothing', async () => {
  const before = (await call('GET', '/snapshot')).body;
  const cases: [string, string, unknown, Record<string, string> | undefined, number][] = [
    ['POST', '/pools', '{"name":', undefined, 400],
    ['POST', '/pools', 'not json at all', undefined, 400],
    ['POST', '/pools', '', { 'content-type': 'application/json' }, 400],
    ['POST', '/pools', 'name=x', { 'content-type': 'text/plain' }, 415],
    ['POST', '/pools', { name: 'x'.repeat(300) }, undefined, 400],
    ['POST', '/pools', { name: 'x', extra: true }, undefined, 400],
    ['POST', '/pools', [1, 2], undefined, 400],
    ['POST', '/pools', { name: 'a'.repeat(2_000_000) }, undefined, 413],
    ['GET', '/nothing-here', undefined, undefined, 404],
  ];
  for (const [m, p, body, headers, status] of cases) {
    const r = await call(m, p, body, headers);
    assert.equal(r.status, status, `${m} ${p} ${String(body).slice(0, 30)}`);
    assert.equal(typeof r.body.error, 'string');
  }
  const unknown = await call('POST', '/pools', { name: 'x', wieght: 1 });
  assert.match(unknown.body.error, /unknown field "wieght"/);
  const after = (await call('GET', '/snapshot')).body;
  assert.deepEqual(after.pools, before.pools);
});

test('read-only fields echoed back by a client are accepted and ignored', async () => {
  const pool = await newPool('echo');
  const got = (await call('GET', `/pools/${pool}`)).body;
  const put = await call('PUT', `/pools/${pool}`, { ...got, id: 'other', name: 'echo2' });
  assert.equal(put.status, 200);
  assert.equal(put.body.id, pool);
  assert.equal(put.body.name, 'echo2');
});

test('empty lists are [] and the OpenAPI document lists the routes', async () => {
  const pool = await newPool('empty');
  assert.deepEqual((await call('GET', `/pools/${pool}/members`)).body, []);
  assert.deepEqual((await call('GET', `/pools/${pool}/georules`)).body, []);
  assert.deepEqual((await call('GET', `/pools/${pool}/status`)).body, []);
  const doc = await call('GET', '/openapi.json');
  assert.equal(doc.status, 200);
  assert.equal(doc.body.openapi, '3.0.3');
  for (const p of ['/api/v1/pools', '/api/v1/pools/{id}/members', '/api/v1/services', '/api/v1/pools/{id}/healthcheck', '/api/v1/georules/{id}']) assert.ok(doc.body.paths[p], p);
});

test('every row records its origin and revision; writes persist across a restart', async () => {
  const pool = await newPool('persist');
  const row = (await call('GET', `/pools/${pool}`)).body;
  assert.equal(row.origin, 'api');
  assert.match(row.revision, /^api:/);
  const rows = d.core.store.loadAll();
  assert.ok(rows.some((r) => r.id === pool && r.origin === 'api'));
  const raw = readFileSync(join(d.dir, 'gslbd.db'));
  assert.ok(raw.length > 0);
});
