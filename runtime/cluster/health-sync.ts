import type { KV } from '@nats-io/kv';
import type { Core } from '../app.js';
import type { HealthTransition } from '../../core/events/bus.js';
import { rttMoved, type HealthEntry } from '../ports/health-view.js';
import type { ClusterMetrics } from './metrics.js';
import { healthKey, parseHealthKey, type ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';
import { subscribePeers } from './peer-subscription.js';
import { bounded } from './bounded.js';
import type { PeerHealth } from './peer-health.js';

/** A health flip on `svc.health.<cluster>` (gslb-api.md §6 `health_update` fields). */
export interface HealthFlipMsg {
  poolId: string; ipAddress: string; healthy: boolean; score: number; timestamp: number; rttMs: number; node: string;
}

/**
 * Health state sync (gslb-api.md §3 rule 3): local flips are published at once on
 * `svc.health.<cluster>` and written to KV `SVC_HEALTH` (`<cluster>.<node>.<pool>.<ip>`); peers'
 * flips are merged into `PeerHealth` and re-emitted as `health_update` on the local feed with
 * their `node`. `catchUp` (every 30 s, and at each connection) makes KV match this node's local
 * view and memory match KV for the peers; a run is given up after max(10 s, the interval). Returns
 * `{catchUp, stop}`.
 */
export function startHealthSync(deps: {
  core: Core; link: NatsLink; names: ClusterNames; peers: PeerHealth; metrics: ClusterMetrics; catchUpMs: number;
}): { catchUp: () => Promise<void>; stop: () => void } {
  const { core, link, names, peers, metrics } = deps;
  const enc = new TextEncoder();
  let kv: KV | undefined;
  const bucketOp = <T>(op: string, p: Promise<T>): Promise<T> =>
    p.then((v) => { metrics.kvOps.inc({ bucket: names.healthBucket, op, result: 'ok' }); return v; },
      (err: unknown) => { metrics.kvOps.inc({ bucket: names.healthBucket, op, result: 'error' }); throw err; });

  const entryOf = (t: HealthTransition): HealthEntry => ({ healthy: t.healthy, score: t.score, lastChecked: t.timestamp, rttMs: t.rttMs, node: t.node });
  const offFlip = core.bus.on('health_transition', (t) => {
    if (t.node !== names.node || !link.up || !link.nc) return;
    const msg: HealthFlipMsg = { poolId: t.poolId, ipAddress: t.ipAddress, healthy: t.healthy, score: t.score, timestamp: t.timestamp, rttMs: t.rttMs, node: t.node };
    const data = enc.encode(JSON.stringify(msg));
    try {
      link.nc.publish(names.healthSubject, data);
      metrics.published.inc({ type: 'health' });
    } catch { /* the catch-up repairs it */ }
    if (kv) void bucketOp('put', kv.put(healthKey(names, t.node, t.poolId, t.ipAddress), enc.encode(JSON.stringify(entryOf(t))))).catch(() => undefined);
  });

  const merge = (poolId: string, ip: string, e: HealthEntry, viaFlip: boolean) => {
    const now = Date.now();
    const prev = peers.reports(poolId, ip)?.get(e.node);
    if (!peers.set(poolId, ip, { ...e, receivedAt: now })) return;
    if (viaFlip) metrics.mergeLag.observe({ type: 'health' }, Math.max(0, now - e.lastChecked) / 1000);
    // a newer probe time with the same state is stored but is not news; a moved RTT changes the
    // cluster-wide minimum the DNS steps order by (docs/cluster.md "Probe RTT"), not the health feed
    if (prev && prev.healthy === e.healthy && prev.score === e.score) {
      if (rttMoved(prev.rttMs, e.rttMs)) core.health.touch(poolId, ip);
      return;
    }
    core.health.touch(poolId, ip); // derived DNS data keyed on the version is recomputed
    core.bus.emit('ws_message', { type: 'health_update', payload: { poolId, ipAddress: ip, healthy: e.healthy, score: e.score, timestamp: e.lastChecked, rttMs: e.rttMs, node: e.node } });
  };

  subscribePeers<HealthFlipMsg>(link, names.healthSubject, names.node, (f) => {
    metrics.received.inc({ type: 'health' });
    merge(f.poolId, f.ipAddress, { healthy: f.healthy, score: f.score, lastChecked: f.timestamp, rttMs: f.rttMs, node: f.node }, true);
  });
  link.onReady(async () => {
    kv = await link.bucket(names.healthBucket);
    await catchUp();
  });

  let running: Promise<void> | undefined;
  // One run is bounded: a KV call that never answers (a lost reply, a keys listing that does not
  // end) must not hold back every later catch-up, and with them the repair of this node's view.
  const limitMs = Math.max(10_000, deps.catchUpMs);
  const catchUp = (): Promise<void> => (running ??= bounded(runCatchUp(), limitMs, () => {
    core.log.warn({ limitMs }, 'health catch-up did not finish in time; the next one starts afresh');
  }).finally(() => { running = undefined; }));
  const runCatchUp = async () => {
    if (!link.up || !kv) return;
    const bucket = kv;
    const startedAt = Date.now();
    let complete = true;
    // KV → memory for peers, memory → KV for this node
    const keys: string[] = [];
    for await (const k of await bucketOp('keys', bucket.keys(`${names.clusterToken}.>`))) keys.push(k);
    const seen = new Set<string>();
    const own = new Map<string, HealthEntry>();
    for (const [poolId, ips] of core.health.pools()) for (const [ip, e] of ips) own.set(healthKey(names, names.node, poolId, ip), { ...e, node: names.node });
    const batch = 32;
    for (let i = 0; i < keys.length; i += batch) {
      await Promise.all(keys.slice(i, i + batch).map(async (k) => {
        const parsed = parseHealthKey(k);
        if (!parsed) return;
        if (parsed.node === names.node) {
          if (!own.has(k)) await bucketOp('delete', bucket.delete(k)).catch(() => undefined);
          return;
        }
        const e = await bucketOp('get', bucket.get(k)).catch(() => { complete = false; return null; });
        if (!e || e.operation !== 'PUT') return;
        let entry: HealthEntry;
        try { entry = e.json<HealthEntry>(); } catch { return; }
        seen.add(`${parsed.node}\u0000${parsed.poolId}\u0000${parsed.ip}`);
        merge(parsed.poolId, parsed.ip, { ...entry, node: parsed.node }, false);
      }));
    }
    // peers' entries gone from KV (member removed there) are dropped here too, unless a read failed
    if (complete) for (const [poolId, ip, e] of peers.all()) {
      if (e.receivedAt < startedAt && !seen.has(`${e.node}\u0000${poolId}\u0000${ip}`)) { peers.delete(poolId, ip, e.node); core.health.touch(poolId, ip); }
    }
    const ownEntries = [...own];
    for (let i = 0; i < ownEntries.length; i += batch) {
      await Promise.all(ownEntries.slice(i, i + batch).map(async ([k, e]) => {
        const cur = await bucketOp('get', bucket.get(k)).catch(() => null);
        // a probe that did not flip does not rewrite KV (gslb-api.md §3 rule 1), unless its RTT moved
        // enough to matter to the peers' cluster-wide minimum (docs/cluster.md "Probe RTT")
        if (cur && cur.operation === 'PUT') {
          try {
            const kvEntry = cur.json<HealthEntry>();
            if (kvEntry.healthy === e.healthy && kvEntry.score === e.score && !rttMoved(kvEntry.rttMs, e.rttMs)) return;
          } catch { /* rewrite */ }
        }
        await bucketOp('put', bucket.put(k, enc.encode(JSON.stringify(e)))).catch(() => undefined);
      }));
    }
  };
  const timer = setInterval(() => void catchUp().catch((err) => core.log.warn({ err }, 'health catch-up failed')), deps.catchUpMs);
  timer.unref();
  return { catchUp, stop: () => { clearInterval(timer); offFlip(); } };
}
