import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { KV } from '@nats-io/kv';
import { startGitLease } from '../../../runtime/cluster/lease.js';
import { createClusterMetrics } from '../../../runtime/cluster/metrics.js';
import { clusterNames } from '../../../runtime/cluster/names.js';
import type { NatsLink } from '../../../runtime/cluster/nats-link.js';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { WAIT_CEILING_MS } from '../../helpers/wait.js';

const TTL = 300; // the timer renews every 100 ms

/**
 * A KV double with per-key revisions, create/update semantics and an answer delay; `loseNext`
 * makes the next update be applied on the "server" but answered with an error.
 */
function fakeKv() {
  const m = new Map<string, { v: string; rev: number }>();
  let rev = 0;
  const st = { delayMs: 0, loseNext: false, inflight: 0, maxInflight: 0, updates: 0 };
  const later = async <T>(fn: () => T): Promise<T> => {
    st.inflight++; st.maxInflight = Math.max(st.maxInflight, st.inflight);
    try { if (st.delayMs) await new Promise((r) => setTimeout(r, st.delayMs)); return fn(); } finally { st.inflight--; }
  };
  const kv = {
    create: (k: string, v: Uint8Array) => later(() => {
      if (m.has(k)) throw new Error('wrong last sequence');
      m.set(k, { v: Buffer.from(v).toString(), rev: ++rev });
      return rev;
    }),
    update: (k: string, v: Uint8Array, expected: number) => later(() => {
      st.updates++;
      if (m.get(k)?.rev !== expected) throw new Error('wrong last sequence');
      m.set(k, { v: Buffer.from(v).toString(), rev: ++rev });
      if (st.loseNext) { st.loseNext = false; throw new Error('TIMEOUT'); }
      return rev;
    }),
    get: async (k: string) => { const e = m.get(k); return e ? { revision: e.rev, operation: 'PUT', string: () => e.v } : null; },
    delete: async (k: string) => { m.delete(k); },
  };
  return { kv: kv as unknown as KV, m, st };
}

function lease(kv: KV, node: string, now?: () => number) {
  const warnings: string[] = [];
  const log = { info: () => {}, warn: (...a: unknown[]) => { warnings.push(String(a.at(-1))); } };
  const link = { up: true, bucket: async () => kv, onReady: (fn: () => unknown) => { void fn(); } } as unknown as NatsLink;
  const names = clusterNames(validateConfigObject({ cluster: { id: 'c1' }, node: { id: node } }));
  const l = startGitLease({ link, names, ttlMs: TTL, log: log as never, metrics: createClusterMetrics(new Registry()), ...(now ? { now } : {}) });
  return { l, warnings };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until `cond` holds, at most WAIT_CEILING_MS (a loaded machine runs timers late); false if it never did. */
const until = async (cond: () => boolean) => {
  for (const t0 = Date.now(); Date.now() - t0 < WAIT_CEILING_MS; await sleep(10)) if (cond()) return true;
  return cond();
};
const keep = () => { const t = setInterval(() => {}, 1_000); return () => clearInterval(t); };

test('lease: a renewal slower than the timer is not joined by a second one, and the holder keeps the lease', async () => {
  const done = keep();
  const { kv, st } = fakeKv();
  const { l, warnings } = lease(kv, 'a');
  try {
    assert.ok(await until(() => l.holds()), 'taken');
    st.delayMs = 180; // longer than the 100 ms period, shorter than the lease
    assert.ok(await until(() => st.updates >= 3), `renewed meanwhile (${st.updates})`);
    assert.equal(st.maxInflight, 1, 'one attempt at a time');
    assert.deepEqual(warnings, [], 'never lost');
    st.delayMs = 0;
    assert.ok(await until(() => l.holds()));
    assert.equal(l.leader(), 'a');
  } finally { await l.stop(); done(); }
});

test('lease: a renewal applied on the server whose answer was lost is taken up, not waited out', async () => {
  const done = keep();
  const { kv, st, m } = fakeKv();
  const { l, warnings } = lease(kv, 'a');
  const other = lease(kv, 'b');
  try {
    assert.ok(await until(() => l.holds()));
    const before = st.updates;
    st.loseNext = true;
    // the lost answer, the revision taken up, then a renewal from it
    assert.ok(await until(() => st.updates >= before + 2 && l.holds()), 'holds again from the revision the server has');
    assert.equal(m.values().next().value?.v, 'a');
    assert.equal(other.l.holds(), false);
    assert.equal(other.l.leader(), 'a');
    assert.deepEqual(warnings, []);
  } finally { await other.l.stop(); await l.stop(); done(); }
});

test('lease: another node holding the key is a loss: holds() turns false and leader() names it', async () => {
  const done = keep();
  const { kv, m } = fakeKv();
  const { l, warnings } = lease(kv, 'a');
  try {
    assert.ok(await until(() => l.holds()));
    // the key expired on the server and b took it
    const e = m.values().next().value!;
    e.v = 'b'; e.rev += 100;
    assert.ok(await until(() => !l.holds()));
    assert.equal(l.leader(), 'b');
    assert.deepEqual(warnings, ['git leader lease lost']);
  } finally { await l.stop(); done(); }
});

test('lease: settle() makes a holder whose renewal is late renew now; a node that does not hold returns at once', async () => {
  const done = keep();
  let skew = 0;
  const now = () => Date.now() + skew;
  const { kv, st } = fakeKv();
  const { l } = lease(kv, 'a', now);
  // b's own view of the bucket, counting what b asks of it
  let asked = 0;
  const counted = new Proxy(kv, { get: (t, k) => { const v = Reflect.get(t, k) as unknown; return typeof v === 'function' ? (...a: unknown[]) => { asked++; return (v as (...x: unknown[]) => unknown).apply(t, a); } : v; } });
  const other = lease(counted, 'b', now);
  try {
    assert.ok(await until(() => l.holds()));
    // a thread held back longer than the margin: the clock says the lease may have lapsed
    skew = TTL;
    assert.equal(l.holds(), false, 'the clock alone says no');
    const before = st.updates;
    await l.settle!();
    assert.equal(l.holds(), true, 'the server says yes');
    assert.ok(st.updates > before);
    // at once: no round trip to the server (its timer cannot run in between: one await, no turn)
    const askedBefore = asked;
    await other.l.settle!();
    assert.equal(asked, askedBefore, 'a node that does not hold asks the server nothing');
    assert.equal(other.l.holds(), false);
  } finally { await other.l.stop(); await l.stop(); done(); }
});
