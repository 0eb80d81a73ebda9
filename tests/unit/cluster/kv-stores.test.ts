import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { KV } from '@nats-io/kv';
import { KvNonceStore, KvSessionStore } from '../../../runtime/cluster/kv-stores.js';
import { createClusterMetrics } from '../../../runtime/cluster/metrics.js';
import type { NatsLink } from '../../../runtime/cluster/nats-link.js';

/** A KV double with revisions: enough of the bucket API for the stores. */
function fakeKv() {
  const m = new Map<string, { v: string; rev: number }>();
  let rev = 0;
  const entry = (k: string) => { const e = m.get(k); return e ? { key: k, revision: e.rev, operation: 'PUT', string: () => e.v, json: () => JSON.parse(e.v) } : null; };
  const kv = {
    get: async (k: string) => entry(k),
    put: async (k: string, v: string) => { m.set(k, { v: String(v), rev: ++rev }); return rev; },
    delete: async (k: string, o?: { previousSeq?: number }) => {
      if (o?.previousSeq !== undefined && m.get(k)?.rev !== o.previousSeq) throw new Error('wrong last sequence');
      m.delete(k);
    },
    keys: async () => (async function* () { yield* [...m.keys()]; })(),
  };
  return { kv: kv as unknown as KV, m };
}

const rec = (userId: string) => ({ userId, tenantId: 'default', role: 'viewer', createdAt: 0, expiresAt: Date.now() + 60_000 });

test('sessions: shared through KV while up; memory while down, written through on reconnect', async () => {
  const { kv, m } = fakeKv();
  const link = { up: true } as NatsLink;
  const metrics = createClusterMetrics(new Registry());
  const nodeA = new KvSessionStore(link, async () => kv, metrics, 'SVC_SESSIONS');
  const nodeC = new KvSessionStore(link, async () => kv, metrics, 'SVC_SESSIONS');
  await nodeA.put('h1', rec('u1'));
  assert.equal((await nodeC.get('h1'))?.userId, 'u1', 'made on A, valid on C');
  await nodeC.delete('h1');
  assert.equal(await nodeA.get('h1'), undefined, 'revoked on C, gone on A at once');
  // bus down: node-local memory, queued for KV
  link.up = false;
  await nodeA.put('h2', rec('u2'));
  assert.equal((await nodeA.get('h2'))?.userId, 'u2');
  assert.equal(m.has('h2'), false);
  link.up = true;
  await nodeA.flush();
  assert.equal((await nodeC.get('h2'))?.userId, 'u2', 'written through after reconnect');
  await nodeA.put('h3', rec('u2'));
  await nodeC.deleteUser('u2');
  assert.equal(await nodeA.get('h3'), undefined);
  assert.equal(m.size, 0);
});

test('nonces: single use across nodes; expired values are refused', async () => {
  const { kv } = fakeKv();
  const link = { up: true } as NatsLink;
  const metrics = createClusterMetrics(new Registry());
  const a = new KvNonceStore(link, async () => kv, metrics, 'SVC_NONCES');
  const b = new KvNonceStore(link, async () => kv, metrics, 'SVC_NONCES');
  await a.put('state/1+x', 'v1', 60_000);
  assert.equal(await b.take('state/1+x'), 'v1');
  assert.equal(await a.take('state/1+x'), undefined, 'second take gets nothing');
  await a.put('old', 'v', -1);
  assert.equal(await b.take('old'), undefined);
  link.up = false;
  await a.put('local', 'v2', 60_000);
  assert.equal(await b.take('local'), undefined, 'node-local without the bus');
  assert.equal(await a.take('local'), 'v2');
});
