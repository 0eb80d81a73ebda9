/**
 * Unique names across nodes (docs/cluster.md "Unique names"): the same service domain, and the same
 * user e-mail, created on two gslbd processes at the same moment, 50 times each: exactly one 201
 * and one 409 (with the body of the local conflict) every time, and never two rows on any node.
 * (Pool names are not unique in gslbd: a pool is known by its id.)
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startNats, stopAllNats, spawnGslbd, stopAllGslbd, call, waitFor, type GslbdNode } from '../helpers/nats.js';

const KEY = 'u'.repeat(64);
const H = { authorization: `Bearer ${KEY}` };
const STATE = { enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '1500ms', config: { applyTimeout: '3s' } };
const ENV = { GSLB_API_KEY: KEY };
const ROUNDS = 50;

let a: GslbdNode, b: GslbdNode;

before(async () => {
  const nats = await startNats();
  [a, b] = await Promise.all([spawnGslbd('a', { ...STATE, nats: { servers: [nats.url] } }, {}, ENV), spawnGslbd('b', { ...STATE, nats: { servers: [nats.url] } }, {}, ENV)]);
  for (const n of [a, b]) await waitFor(`${n.id} connected`, async () => (await call(n.url, 'GET', '/api/v1/cluster', undefined, H)).body?.connected === true);
});

after(async () => {
  await stopAllGslbd();
  await stopAllNats();
});

/** Creates `body` at `path` on both nodes at once, `ROUNDS` times with `vary(i)`; returns the statuses and the 409 bodies. */
async function race(path: string, body: (i: number) => unknown): Promise<{ statuses: string[]; conflicts: { error: string }[] }> {
  const statuses: string[] = [];
  const conflicts: { error: string }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const rs = await Promise.all([a, b].map((n) => call(n.url, 'POST', path, body(i), H)));
    statuses.push(rs.map((r) => r.status).sort().join(','));
    for (const r of rs) if (r.status === 409) conflicts.push(r.body as { error: string });
  }
  return { statuses, conflicts };
}

test('the same service domain created on two nodes at once: one 201 and one 409, one row', async () => {
  const { statuses, conflicts } = await race('/api/v1/services', (i) => ({ name: `race-${i}`, domain: `race-${i}.example.com.` }));
  assert.deepEqual(statuses, Array(ROUNDS).fill('201,409'));
  for (const c of conflicts) assert.match(c.error, /^domain race-\d+\.example\.com\. is already served by service "race-\d+" \([^)]+\)$/);
  // every node ends with exactly one service of each domain
  for (const n of [a, b]) {
    await waitFor(`${n.id} has every service`, async () => ((await call(n.url, 'GET', '/api/v1/services', undefined, H)).body as unknown[]).length === ROUNDS);
    const domains = ((await call(n.url, "GET", "/api/v1/services", undefined, H)).body as { domain: string }[]).map((x) => x.domain.toLowerCase());
    assert.equal(new Set(domains).size, ROUNDS, `${n.id}: no domain twice`);
  }
  // the local conflict (the row is there now) has the same body as the one the reservation gave
  const row = ((await call(a.url, 'GET', '/api/v1/services', undefined, H)).body as { id: string; name: string }[]).find((x) => x.name === 'race-0')!;
  const local = await call(a.url, 'POST', '/api/v1/services', { name: 'race-0', domain: 'race-0.example.com.' }, H);
  assert.equal(local.status, 409);
  assert.equal(local.body.error, `domain race-0.example.com. is already served by service "race-0" (${row.id})`);
  assert.ok(conflicts.some((c) => c.error === local.body.error), 'the race gave the same body');
});

test('the same e-mail created on two nodes at once: one 201 and one 409, one user', async () => {
  const { statuses, conflicts } = await race('/api/v1/users', (i) => ({ email: `Race${i}@example.test`, password: 'race-user-pass-1', role: 'viewer' }));
  assert.deepEqual(statuses, Array(ROUNDS).fill('201,409'));
  for (const c of conflicts) assert.match(c.error, /^a user with e-mail Race\d+@example\.test already exists$/);
  for (const n of [a, b]) {
    await waitFor(`${n.id} has every user`, async () => ((await call(n.url, 'GET', '/api/v1/users', undefined, H)).body as unknown[]).length === ROUNDS);
    const emails = ((await call(n.url, 'GET', '/api/v1/users', undefined, H)).body as { email: string }[]).map((u) => u.email.toLowerCase());
    assert.equal(new Set(emails).size, ROUNDS, `${n.id}: no address twice`);
  }
  // a deleted user's address is free again, on the other node too
  const u = ((await call(a.url, 'GET', '/api/v1/users', undefined, H)).body as { userId: string; email: string }[]).find((x) => x.email === 'Race0@example.test')!;
  assert.equal((await call(a.url, 'DELETE', `/api/v1/users/${u.userId}`, undefined, H)).status, 204);
  await waitFor('the address is free on b', async () => (await call(b.url, 'POST', '/api/v1/users', { email: 'race0@example.test', password: 'race-user-pass-1', role: 'viewer' }, H)).status === 201);
});
