import type { KV } from '@nats-io/kv';
import { alreadyExists, encodeToken, type ClusterStreams } from '../../cluster/port.js';
import type { DeliveryRow, DeliveryState, SettledDelivery } from '../deliveries/outbox.js';
import type { DeliveryGate } from '../deliveries/worker.js';

/** A delivery's entry in KV: who holds it until when, and its state. */
interface Entry { node: string; until: number; state: 'sending' | SettledDelivery['state'] }

/** How soon a delivery another node just took is looked at again. */
const RACE_RETRY_MS = 500;

/**
 * Who sends a delivery that every node holds (docs/forms.md "In a cluster"): its entry in KV
 * `<kvBucket>_DELIVERIES` under `<cluster>.<delivery key>`. A node takes it by creating the
 * entry, or by updating it at its revision once it is free (the holder's lease ran out: it died
 * mid-attempt; or a retry fell due), so of two nodes taking it at once exactly one wins
 * (JetStream compares the key's last sequence). The holder's lease lasts `leaseMs`, longer than
 * an attempt can (twice the request deadline); after it another node sends it again with the
 * same `webhook-id`. A settled delivery (sent, or failed for good) is never taken again, until a
 * retry of its action opens it.
 */
export class KvDeliveryGate implements DeliveryGate {
  private kv: Promise<KV> | undefined;
  private readonly enc = new TextEncoder();

  constructor(private readonly deps: { streams: ClusterStreams; bucket: string; replicas: () => number; leaseMs: number; publishSettled: (key: string, d: SettledDelivery) => Promise<unknown> }) {}

  async take(row: DeliveryRow, now: number): Promise<{ go: true } | { go: false; state: DeliveryState; until: number }> {
    const kv = await this.bucket();
    const key = this.keyOf(row);
    const mine = this.encode({ node: this.deps.streams.node, until: now + this.deps.leaseMs, state: 'sending' });
    const busy = { go: false, state: 'retrying', until: now + RACE_RETRY_MS } as const;
    const e = await kv.get(key);
    try {
      if (!e || e.operation !== 'PUT') {
        await kv.create(key, mine);
        return { go: true };
      }
      const v = JSON.parse(e.string()) as Entry;
      if (v.state === 'sent' || v.state === 'failed') return { go: false, state: v.state, until: now };
      const own = v.state === 'sending' && v.node === this.deps.streams.node; // this node's lease from before a restart
      if (v.until > now && !own) return { go: false, state: 'retrying', until: v.until };
      await kv.update(key, mine, e.revision);
      return { go: true };
    } catch (err) {
      if (alreadyExists(err)) return busy; // a create or an update at a revision another node passed first
      throw err;
    }
  }

  async done(row: DeliveryRow, d: SettledDelivery): Promise<void> {
    const kv = await this.bucket();
    await kv.put(this.keyOf(row), this.encode({ node: this.deps.streams.node, until: d.state === 'retrying' ? d.nextAt : 0, state: d.state }));
    await this.deps.publishSettled(row.cluster_key!, d);
  }

  /** Opens settled deliveries again (a retry of their action): free for the next node to take. */
  async reopen(keys: readonly string[]): Promise<void> {
    const kv = await this.bucket();
    await Promise.all(keys.map((k) => kv.put(this.keyFor(k), this.encode({ node: this.deps.streams.node, until: 0, state: 'retrying' }))));
  }

  private keyOf(row: DeliveryRow): string {
    return this.keyFor(row.cluster_key!);
  }

  private keyFor(clusterKey: string): string {
    return `${this.deps.streams.clusterToken}.${encodeToken(clusterKey)}`;
  }

  private encode(e: Entry): Uint8Array {
    return this.enc.encode(JSON.stringify(e));
  }

  /** Opens (makes) the bucket. */
  async open(): Promise<void> {
    await this.bucket();
  }

  private bucket(): Promise<KV> {
    this.kv ??= this.deps.streams.bucket(this.deps.bucket, { history: 1, replicas: this.deps.replicas() });
    this.kv.catch(() => { this.kv = undefined; });
    return this.kv;
  }
}
