import type { KV } from '@nats-io/kv';
import { MemoryNonceStore, MemorySessionStore, type NonceStore, type SessionRecord, type SessionStore } from '../ports/sessions.js';
import type { ClusterMetrics } from './metrics.js';
import { encodeToken } from './names.js';
import type { NatsLink } from './nats-link.js';

type Bucket = () => Promise<KV>;

/**
 * Sessions in KV `SVC_SESSIONS` under the SHA-256 hex of the token (gslb-config-auth.md §2), so a
 * login on one node is valid on all and a delete (logout, revocation) is seen everywhere at the
 * next request: every `get` reads KV while the bus is up. Records read or written here are also
 * kept in memory; while the bus is down the node answers from that memory (sessions known to it
 * keep working, new logins are node-local), and queued writes and deletes go to KV on reconnect.
 * The record's `expiresAt` is authoritative; the bucket TTL (sessionTTL) only collects garbage.
 */
export class KvSessionStore implements SessionStore {
  private readonly mem: MemorySessionStore;
  private readonly pendingPut = new Set<string>();
  private readonly pendingDel = new Set<string>();

  constructor(private readonly link: NatsLink, private readonly bucket: Bucket, private readonly metrics: ClusterMetrics, private readonly bucketName: string, private readonly now: () => number = Date.now) {
    this.mem = new MemorySessionStore(now);
  }
  private count(op: string, ok: boolean): void {
    this.metrics.kvOps.inc({ bucket: this.bucketName, op, result: ok ? 'ok' : 'error' });
  }
  async get(h: string): Promise<SessionRecord | undefined> {
    if (!this.link.up || this.pendingPut.has(h) || this.pendingDel.has(h)) return this.mem.get(h);
    try {
      const e = await (await this.bucket()).get(h);
      this.count('get', true);
      if (!e || e.operation !== 'PUT') { await this.mem.delete(h); return undefined; }
      const rec = e.json<SessionRecord>();
      if (rec.expiresAt <= this.now()) { await this.mem.delete(h); return undefined; }
      await this.mem.put(h, rec);
      return rec;
    } catch {
      this.count('get', false);
      return this.mem.get(h);
    }
  }
  async put(h: string, rec: SessionRecord): Promise<void> {
    await this.mem.put(h, rec);
    this.pendingDel.delete(h);
    if (!(await this.tryKv('put', async (kv) => { await kv.put(h, JSON.stringify(rec)); }))) this.pendingPut.add(h);
    else this.pendingPut.delete(h);
  }
  async delete(h: string): Promise<void> {
    await this.mem.delete(h);
    this.pendingPut.delete(h);
    if (!(await this.tryKv('delete', async (kv) => { await kv.delete(h); }))) this.pendingDel.add(h);
    else this.pendingDel.delete(h);
  }
  async deleteUser(userId: string): Promise<void> {
    await this.mem.deleteUser(userId);
    await this.tryKv('deleteUser', async (kv) => {
      for await (const k of await kv.keys()) {
        const e = await kv.get(k);
        if (e && e.operation === 'PUT' && e.json<SessionRecord>().userId === userId) await kv.delete(k);
      }
    });
  }
  /** Writes queued puts and deletes to KV (called on reconnect). */
  async flush(): Promise<void> {
    for (const h of [...this.pendingDel]) if (await this.tryKv('delete', async (kv) => { await kv.delete(h); })) this.pendingDel.delete(h);
    for (const h of [...this.pendingPut]) {
      const rec = await this.mem.get(h);
      if (!rec) { this.pendingPut.delete(h); continue; }
      if (await this.tryKv('put', async (kv) => { await kv.put(h, JSON.stringify(rec)); })) this.pendingPut.delete(h);
    }
  }
  private async tryKv(op: string, fn: (kv: KV) => Promise<void>): Promise<boolean> {
    if (!this.link.up) return false;
    try { await fn(await this.bucket()); this.count(op, true); return true; } catch { this.count(op, false); return false; }
  }
}

/**
 * Single-use values (OIDC state nonces) in KV `SVC_NONCES`, shared by all nodes: `take` reads the
 * value and deletes it at the read revision, so of two nodes taking the same nonce only one gets
 * it. Values carry their own expiry; the bucket TTL (1 h) collects garbage. Without the bus the
 * node-local memory store is used (gslb-config-auth.md §5 item 7).
 */
export class KvNonceStore implements NonceStore {
  private readonly mem: MemoryNonceStore;
  constructor(private readonly link: NatsLink, private readonly bucket: Bucket, private readonly metrics: ClusterMetrics, private readonly bucketName: string, private readonly now: () => number = Date.now) {
    this.mem = new MemoryNonceStore(now);
  }
  private count(op: string, ok: boolean): void {
    this.metrics.kvOps.inc({ bucket: this.bucketName, op, result: ok ? 'ok' : 'error' });
  }
  async put(key: string, value: string, ttlMs: number): Promise<void> {
    if (this.link.up) {
      try {
        await (await this.bucket()).put(encodeToken(key), JSON.stringify({ value, expiresAt: this.now() + ttlMs }));
        this.count('put', true);
        return;
      } catch { this.count('put', false); }
    }
    await this.mem.put(key, value, ttlMs);
  }
  async take(key: string): Promise<string | undefined> {
    const local = await this.mem.take(key);
    if (local !== undefined || !this.link.up) return local;
    try {
      const kv = await this.bucket();
      const k = encodeToken(key);
      const e = await kv.get(k);
      if (!e || e.operation !== 'PUT') { this.count('get', true); return undefined; }
      await kv.delete(k, { previousSeq: e.revision }); // fails if another node took it first
      this.count('take', true);
      const v = e.json<{ value: string; expiresAt: number }>();
      return v.expiresAt > this.now() ? v.value : undefined;
    } catch {
      this.count('take', false);
      return undefined;
    }
  }
}
