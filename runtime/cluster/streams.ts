import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { KV, KvOptions } from '@nats-io/kv';
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { Logger } from '../log/logger.js';
import { startGitLease, type GitLeader } from './lease.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import type { NatsLink, ReadyHandler } from './nats-link.js';

/** A lease on one key of the lease bucket (lease.ts): held by one node at a time, taken over when it expires. */
export type ClusterLease = GitLeader & { stop: () => Promise<void> };

/**
 * JetStream as the cluster's transport offers it to a feature that keeps its own streams, buckets
 * and object stores (the form service's submissions, docs/forms.md "In a cluster"): this node's
 * connection, its ids, the number of NATS servers it knows, buckets and object stores made with
 * the replicas the caller asks, and leases on keys of the cluster's lease bucket. Every handle
 * throws (or rejects) while the bus is down; `up()` tells.
 */
export interface ClusterStreams {
  /** this node's id and the cluster's id as one subject token */
  node: string;
  clusterToken: string;
  up(): boolean;
  /** runs `fn` after every (re)connection (`first` on the first of this process), retried with backoff when it throws */
  onReady(fn: ReadyHandler): void;
  js(): JetStreamClient;
  jsm(): JetStreamManager;
  /** the NATS servers the connection knows (itself and the ones it announced) */
  servers(): number;
  /** opens a KV bucket, creating it with these options (replicas included) when absent; cached per name */
  bucket(name: string, opts: Partial<KvOptions>): Promise<KV>;
  /** opens an object store, creating it with `replicas` when absent; cached per name */
  objectStore(name: string, replicas: number): Promise<ObjectStore>;
  /** a lease on `<cluster>.<key>` in bucket `bucket` (made with the TTL `ttlMs`, the lease time); stop() releases it */
  lease(key: string, bucket: string, ttlMs: number): ClusterLease;
}

declare module '../ports/parts.js' {
  interface Ports {
    /** JetStream for features with streams of their own (streams.ts); unset without `state.nats.servers` */
    clusterStreams?: ClusterStreams;
  }
}

/** The ClusterStreams of this node's link. */
export function clusterStreams(deps: { link: NatsLink; names: ClusterNames; metrics: ClusterMetrics; log: Logger }): ClusterStreams {
  const { link, names } = deps;
  const stores = new Map<string, Promise<ObjectStore>>();
  const need = <T>(v: T | undefined): T => {
    if (!v || !link.up) throw new Error('nats not connected');
    return v;
  };
  return {
    node: names.node,
    clusterToken: names.clusterToken,
    up: () => link.up,
    onReady: (fn) => link.onReady(fn),
    js: () => need(link.js),
    jsm: () => need(link.jsm),
    servers: () => 1 + (link.nc?.info?.connect_urls?.length ?? 0),
    bucket: (name, opts) => link.bucket(name, opts),
    objectStore: (name, replicas) => {
      let p = stores.get(name);
      if (!p) {
        if (!link.js) return Promise.reject(new Error('nats not connected'));
        p = new Objm(link.js).create(name, { replicas });
        p.catch(() => stores.delete(name));
        stores.set(name, p);
      }
      return p;
    },
    lease: (key, bucket, ttlMs) => startGitLease({ link, names, ttlMs, log: deps.log, metrics: deps.metrics, other: { key, bucket } }),
  };
}
