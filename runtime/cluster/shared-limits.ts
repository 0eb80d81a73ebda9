import type { KV } from '@nats-io/kv';
import { StorageType } from '@nats-io/jetstream';
import type { ClusterMetrics } from './metrics.js';
import { encodeToken, type ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';
import type { Admission, LimitPolicy, SharedLimiter, SharedLimits } from './port.js';
import { alreadyExists } from './kv-claim.js';

/** The share of a limit the nodes may go above it together (docs/cluster.md "Shared limits"). */
export const OVERSHOOT = 0.2;

/** Conflicting writes of one key in a row before a commit gives up (the caller falls back for that request). */
const MAX_ATTEMPTS = 8;
/** Keys kept in memory per limiter before idle ones are dropped. */
const PRUNE_AT = 10_000;

/**
 * How many requests of one key a node may admit on its own (not yet written to KV) with `nodes`
 * live nodes: ⌊0.2 × size / (nodes + 1)⌋. With at most that many unwritten admissions per node,
 * the cluster admits at most size + (nodes + 1) × slack ≤ 1.2 × size per window (docs/cluster.md).
 * 0 means every admission waits for its compare-and-set in KV.
 */
export function slackFor(size: number, nodes: number): number {
  return Math.max(0, Math.floor((OVERSHOOT * size) / (Math.max(1, nodes) + 1)));
}

interface Entry<S> {
  /** the key's state as last read from or written to KV */
  seen: S | undefined;
  /** its KV revision; 0 when KV has no entry */
  rev: number;
  /** false until `seen` came from KV, and after a failed write (read again before the next) */
  known: boolean;
  /** admitted here and being written */
  inflight: number;
  /** admitted here, not yet written */
  pending: number;
  waiters: ((a: Admission | undefined) => void)[];
  flushing: boolean;
  usedAt: number;
}

interface Deps {
  link: NatsLink;
  names: ClusterNames;
  metrics: ClusterMetrics;
  /** live nodes, this one included */
  nodes: () => number;
  now?: () => number;
}

/**
 * One limiter over KV `SVC_LIMIT_<name>` (memory storage, TTL = the policy's `ttlMs`), key
 * `<cluster>.<key>` holding the policy's state as JSON. `take` admits on its own while this node's
 * unwritten admissions stay under the slack (`slackFor`) and the last known state has room, and
 * writes them behind (one compare-and-set on the key's revision in flight per key; a conflict reads
 * the key again); beyond the slack, or with the state unknown, the request waits for that write,
 * which admits it only if the state read from KV has room. Without the bus every call resolves
 * undefined at once.
 */
class KvLimiter<S> implements SharedLimiter<S> {
  private readonly entries = new Map<string, Entry<S>>();
  private readonly bucketName: string;

  constructor(private readonly deps: Deps, name: string, private readonly policy: LimitPolicy<S>) {
    this.bucketName = `SVC_LIMIT_${name.toUpperCase().replace(/[^A-Z0-9_-]/g, '_')}`;
  }

  private now(): number { return (this.deps.now ?? Date.now)(); }
  private kv(): Promise<KV> {
    return this.deps.link.bucket(this.bucketName, { ttl: this.policy.ttlMs, storage: StorageType.Memory });
  }
  private key(key: string): string { return `${this.deps.names.clusterToken}.${encodeToken(key)}`; }
  private count(op: string, result: string): void { this.deps.metrics.kvOps.inc({ bucket: this.bucketName, op, result }); }

  private entry(key: string, now: number): Entry<S> {
    let e = this.entries.get(key);
    if (!e) {
      if (this.entries.size >= PRUNE_AT) this.prune(now);
      e = { seen: undefined, rev: 0, known: false, inflight: 0, pending: 0, waiters: [], flushing: false, usedAt: now };
      this.entries.set(key, e);
    }
    e.usedAt = now;
    return e;
  }

  /** Drops keys idle for longer than the policy's TTL with nothing to write. */
  private prune(now: number): void {
    for (const [k, e] of this.entries) {
      if (now - e.usedAt > this.policy.ttlMs && !e.flushing && e.pending === 0 && e.waiters.length === 0) this.entries.delete(k);
    }
  }

  take(key: string): Promise<Admission | undefined> {
    if (!this.deps.link.up) return Promise.resolve(undefined);
    const now = this.now();
    const e = this.entry(key, now);
    if (e.known && e.waiters.length === 0) {
      const local = this.policy.add(e.seen, e.inflight + e.pending, now);
      // a state read earlier can only show more room than KV has now, never less: refusing on it is safe
      if (this.policy.room(local, now) < 1) return Promise.resolve({ ok: false, waitMs: this.policy.waitMs(local, now) });
      if (e.inflight + e.pending < slackFor(this.policy.size, this.deps.nodes())) {
        e.pending++;
        void this.flush(key, e);
        return Promise.resolve({ ok: true });
      }
    }
    return new Promise((resolve) => { e.waiters.push(resolve); void this.flush(key, e); });
  }

  /** Writes what this node admitted and decides the waiting requests, until nothing is left. */
  private async flush(key: string, e: Entry<S>): Promise<void> {
    if (e.flushing) return;
    e.flushing = true;
    try {
      while (e.pending > 0 || e.waiters.length > 0) {
        const batch = e.pending;
        const waiters = e.waiters.splice(0);
        e.pending = 0;
        e.inflight = batch;
        try {
          const { admitted, state } = await this.commit(key, e, batch, waiters.length);
          const now = this.now();
          waiters.forEach((w, i) => w(i < admitted ? { ok: true } : { ok: false, waitMs: this.policy.waitMs(state, now) }));
        } catch {
          // the admissions of this batch are lost to the cluster count; the waiting requests get the per-node limit
          e.known = false;
          for (const w of waiters) w(undefined);
          if (!this.deps.link.up) { e.pending = 0; for (const w of e.waiters.splice(0)) w(undefined); }
        } finally {
          e.inflight = 0;
        }
      }
    } finally {
      e.flushing = false;
    }
  }

  /**
   * Adds `batch` (already admitted) and as many of `want` waiting requests as the state has room
   * for, by compare-and-set on the key's revision; reads the key again after a conflict.
   */
  private async commit(key: string, e: Entry<S>, batch: number, want: number): Promise<{ admitted: number; state: S }> {
    const kv = await this.kv();
    const k = this.key(key);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (!e.known) await this.load(kv, k, e);
      const now = this.now();
      const base = this.policy.add(e.seen, batch, now);
      const admitted = Math.min(want, Math.max(0, Math.floor(this.policy.room(base, now))));
      if (batch + admitted === 0) return { admitted: 0, state: base };
      const next = this.policy.add(e.seen, batch + admitted, now);
      try {
        e.rev = await this.write(kv, k, next, e.rev);
        e.seen = next;
        this.count('update', 'ok');
        return { admitted, state: next };
      } catch (err) {
        if (!alreadyExists(err)) { this.count('update', 'error'); throw err; }
        this.count('update', 'conflict');
        e.known = false;
      }
    }
    throw new Error(`limit ${this.bucketName}: too many conflicting writes`);
  }

  private async load(kv: KV, k: string, e: Entry<S>): Promise<void> {
    try {
      const got = await kv.get(k);
      e.rev = got?.revision ?? 0;
      e.seen = got && got.operation === 'PUT' ? got.json<S>() : undefined;
      e.known = true;
      this.count('get', 'ok');
    } catch (err) {
      this.count('get', 'error');
      throw err;
    }
  }

  /** Creates the key (revision 0) or updates it at `rev`; resolves the new revision. */
  private write(kv: KV, k: string, state: S, rev: number): Promise<number> {
    const data = JSON.stringify(state);
    return rev === 0 ? kv.create(k, data) : kv.update(k, data, rev);
  }

  async read(key: string): Promise<{ state: S | undefined } | undefined> {
    if (!this.deps.link.up) return undefined;
    const e = this.entry(key, this.now());
    try {
      await this.load(await this.kv(), this.key(key), e);
      return { state: e.seen };
    } catch {
      e.known = false;
      return undefined;
    }
  }

  async add(key: string, n: number): Promise<true | undefined> {
    if (!this.deps.link.up) return undefined;
    const e = this.entry(key, this.now());
    const kv = await this.kv().catch(() => undefined);
    if (!kv) return undefined;
    const k = this.key(key);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        if (!e.known) await this.load(kv, k, e);
        const next = this.policy.add(e.seen, n, this.now());
        e.rev = await this.write(kv, k, next, e.rev);
        e.seen = next;
        this.count('update', 'ok');
        return true;
      } catch (err) {
        e.known = false;
        if (!alreadyExists(err)) { this.count('update', 'error'); return undefined; }
        this.count('update', 'conflict');
      }
    }
    return undefined;
  }

  async reset(key: string): Promise<true | undefined> {
    if (!this.deps.link.up) return undefined;
    const e = this.entry(key, this.now());
    try {
      await (await this.kv()).delete(this.key(key));
      this.count('delete', 'ok');
      e.known = false;
      return true;
    } catch {
      this.count('delete', 'error');
      e.known = false;
      return undefined;
    }
  }
}

/** The cluster's limiters (core.ports.sharedLimits): one per name, made on first use. */
export function sharedLimits(deps: Deps): SharedLimits {
  const made = new Map<string, KvLimiter<unknown>>();
  return {
    limiter<S>(name: string, policy: LimitPolicy<S>): SharedLimiter<S> {
      let l = made.get(name);
      if (!l) made.set(name, (l = new KvLimiter<unknown>(deps, name, policy as LimitPolicy<unknown>)));
      return l as SharedLimiter<S>;
    },
  };
}
