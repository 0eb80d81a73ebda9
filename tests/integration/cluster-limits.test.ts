import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startNats, stopAllNats, waitFor, type NatsServer } from '../helpers/nats.js';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { issueLicense } from '../../runtime/license/license.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// Limits shared by the nodes of a cluster (docs/cluster.md "Shared limits"): three gslbd nodes on
// one nats-server, a client spreading its requests over all three, gets at most 1.2 times the
// limit before 429 (not 3 times); with the bus away each node applies the limit on its own.

const LIMIT = 30;
const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
const json = { 'content-type': 'application/json' };
let nats: NatsServer;
const nodes: TestDaemon[] = [];

before(async () => {
  nats = await startNats();
  const secret = randomBytes(32).toString('hex');
  const licenseKey = await issueLicense({ tier: 'pro', licensee: 'tests', expiresAt: Math.floor(Date.now() / 1000) + 86_400 }, secret);
  for (const id of ['a', 'b', 'c']) {
    nodes.push(await startTestDaemon({
      node: { id }, cluster: { id: 'limits' }, license: { secret, licenseKey },
      forms: { rateLimits: { perKeyPerMinute: LIMIT, perIpPerMinute: LIMIT } },
      state: { enableConfigSync: true, heartbeatInterval: '300ms', nats: { servers: [nats.url] } },
    } as never, { GSLB_API_KEY: SYS }));
  }
  // every node counts the others as live: the local slack depends on the number of nodes
  await waitFor('three live nodes', () => nodes.every((d) => d.core.ports.cluster!.connected() && d.core.ports.cluster!.live.liveSet().size === 2), 20_000, 50);
});
after(async () => {
  for (const d of nodes) await d.stop().catch(() => undefined);
  await stopAllNats();
});

/**
 * Sends `total` requests, `send(node)` each, in rounds of six at once over the three nodes (two
 * each); returns the statuses by node and the windows of `windowMs` the run touched.
 */
async function spread(total: number, send: (d: TestDaemon) => Promise<number>, windowMs: number) {
  const started = Date.now();
  const byNode = nodes.map(() => new Map<number, number>());
  for (let i = 0; i < total; i += 6) {
    const round = Array.from({ length: Math.min(6, total - i) }, (_, j) => (i + j) % 3);
    const statuses = await Promise.all(round.map((n) => send(nodes[n]!)));
    round.forEach((n, j) => byNode[n]!.set(statuses[j]!, (byNode[n]!.get(statuses[j]!) ?? 0) + 1));
  }
  const windows = 1 + Math.floor((Date.now() - started) / windowMs);
  const count = (status: number) => byNode.reduce((s, m) => s + (m.get(status) ?? 0), 0);
  return { byNode, windows, count, elapsedMs: Date.now() - started };
}

/** Waits until every node knows the form key (config sync). */
async function keyOnAll(key: string): Promise<void> {
  for (const d of nodes) await waitFor(`key on ${d.core.config.node.id}`, async () => (await publicClient(d, key)('GET', '/plan')).status === 200, 20_000, 100);
}

test('forms perKeyPerMinute: requests of one key spread over three nodes get at most 1.2 × the limit', async (t) => {
  const { key } = addFormKey(nodes[0]!);
  await keyOnAll(key); // three requests of the key's window
  const r = await spread(3 * LIMIT, async (d) => (await publicClient(d, key)('GET', '/plan')).status, 60_000);
  const ok = r.count(200) + 3;
  t.diagnostic(`${ok} of ${3 * LIMIT} allowed, limit ${LIMIT}`);
  assert.equal(r.count(200) + r.count(429), 3 * LIMIT, JSON.stringify(r.byNode.map((m) => [...m])));
  assert.ok(ok >= LIMIT && ok <= r.windows * LIMIT * 1.2, `${ok} allowed with a limit of ${LIMIT} (${r.windows} window(s))`);
  // a refused request names the seconds left in the window
  const refused = await publicClient(nodes[1]!, key)('GET', '/plan');
  assert.equal(refused.status, 429);
  assert.deepEqual(Object.keys(refused.body as object).sort(), ['message', 'name']);
});

test('forms perIpPerMinute: posts from one address spread over three nodes get at most 1.2 × the limit', async (t) => {
  const { key } = addFormKey(nodes[0]!);
  const form = await publicClient(nodes[0]!, key)('POST', '/form', { name: 'Spread' });
  assert.equal(form.status, 201, JSON.stringify(form.body));
  const id = form.body.id as string;
  for (const d of nodes) await waitFor(`form on ${d.core.config.node.id}`, async () => (await publicClient(d, key)('GET', `/form/${id}`)).status === 200, 20_000, 100);
  const r = await spread(3 * LIMIT, async (d) => {
    const res = await fetch(`${d.url}/f/${id}`, { method: 'POST', headers: json, body: '{"a":1}', redirect: 'manual' });
    await res.arrayBuffer();
    return res.status;
  }, 60_000);
  const ok = r.count(200);
  t.diagnostic(`${ok} of ${3 * LIMIT} taken, limit ${LIMIT}`);
  assert.equal(ok + r.count(429), 3 * LIMIT, JSON.stringify(r.byNode.map((m) => [...m])));
  assert.ok(ok >= LIMIT && ok <= r.windows * LIMIT * 1.2, `${ok} posts taken with a limit of ${LIMIT} (${r.windows} window(s))`);
});

test('RUM ingest: one source spread over three nodes gets the burst about once, not three times', async (t) => {
  // the limiter comes before the service lookup: 404 (no such service) is a request let through
  const r = await spread(60, async (d) => (await api(d.url, 'POST', '/api/v1/rum/ingest', { domain: 'none.example.test', samples: [{ ip: '192.0.2.1', ms: 5 }] })).status, 1);
  const ok = r.count(404);
  t.diagnostic(`${ok} of 60 taken in ${r.elapsedMs} ms`);
  assert.equal(ok + r.count(429), 60, JSON.stringify(r.byNode.map((m) => [...m])));
  // burst 10 plus 2 a second for the time the run took, 20 % above at most
  const bound = 1.2 * (10 + (2 * r.elapsedMs) / 1000);
  assert.ok(ok >= 10 && ok <= bound, `${ok} beacons taken in ${r.elapsedMs} ms (bound ${bound.toFixed(1)})`);
});

test('login: failures spread over three nodes are counted once; a success on one node clears them on all', async () => {
  const login = (d: TestDaemon, password: string) => api(d.url, 'POST', '/api/v1/auth/login', { email: 'spread@example.test', password });
  const setup = await api(nodes[0]!.url, 'POST', '/api/v1/users', { email: 'spread@example.test', password: 'correct horse battery', role: 'viewer', displayName: 'S' }, sys);
  assert.equal(setup.status, 201, JSON.stringify(setup.body));
  for (const d of nodes) {
    await waitFor(`user on ${d.core.config.node.id}`, async () => JSON.stringify((await api(d.url, 'GET', '/api/v1/users', undefined, sys)).body).includes('spread@example.test'), 20_000, 100);
  }
  // four failures spread, then a success on the third node clears the count everywhere
  for (let i = 0; i < 4; i++) assert.equal((await login(nodes[i % 3]!, 'wrong')).status, 401, `failure ${i + 1}`);
  assert.equal((await login(nodes[2]!, 'correct horse battery')).status, 200);
  // five free failures again, spread; the next attempt is refused on every node
  for (let i = 0; i < 5; i++) assert.equal((await login(nodes[i % 3]!, 'wrong')).status, 401, `failure ${i + 1} after the success`);
  for (const d of nodes) {
    const res = await login(d, 'correct horse battery');
    assert.equal(res.status, 429, `node ${d.core.config.node.id}`);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  }
});

test('the bus away: each node applies the limit on its own, and keeps answering', async () => {
  const { key } = addFormKey(nodes[0]!);
  await keyOnAll(key);
  await nats.kill();
  await waitFor('every node sees the bus away', () => nodes.every((d) => !d.core.ports.cluster!.connected()), 20_000, 50);
  const r = await spread(3 * (LIMIT + 5), async (d) => (await publicClient(d, key)('GET', '/plan')).status, 60_000);
  // each node counts alone from here (the request of keyOnAll may be in its window)
  for (const [n, m] of r.byNode.entries()) {
    assert.ok((m.get(200) ?? 0) <= r.windows * LIMIT && (m.get(200) ?? 0) >= LIMIT - 1, `node ${n}: ${JSON.stringify([...m])}`);
  }
  assert.ok(r.count(200) > 1.2 * LIMIT, 'per node, not shared');
});
