import { JetStreamApiCodes } from '@nats-io/jetstream';
import type { ClusterMetrics } from './metrics.js';
import { encodeToken, type ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';

/**
 * Cluster-wide "the first one wins" (docs/cluster.md "Replay caches"): `claim(bucket, ttlMs,
 * tokens)` creates the key `<cluster>.<token>.<token>…` (each token escaped) in KV `bucket`,
 * made with a bucket TTL of `ttlMs` when it does not exist yet, so an entry expires by itself.
 * Resolves true when this call created the key, false when it exists (another node, or this one,
 * claimed it first: JetStream compares and sets on the key's last sequence, so of two nodes
 * creating one key at once exactly one wins). Rejects when the bus is down or KV fails: the
 * caller decides what an unknown answer means.
 */
export type ClusterClaim = (bucket: string, ttlMs: number, tokens: readonly string[]) => Promise<boolean>;

/** True for the error `kv.create` gives when the key exists (a wrong last sequence). */
export function alreadyExists(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === JetStreamApiCodes.StreamWrongLastSequence || code === JetStreamApiCodes.StreamWrongLastSequenceUnknown;
}

/** A ClusterClaim over this node's link; each call counted in `gslbd_state_kv_operations_total{op="claim"}`. */
export function kvClaim(link: NatsLink, names: ClusterNames, metrics: ClusterMetrics): ClusterClaim {
  return async (bucket, ttlMs, tokens) => {
    if (!link.up) throw new Error('nats not connected');
    const key = [names.clusterToken, ...tokens.map(encodeToken)].join('.');
    try {
      await (await link.bucket(bucket, { ttl: ttlMs })).create(key, names.node);
      metrics.kvOps.inc({ bucket, op: 'claim', result: 'ok' });
      return true;
    } catch (err) {
      const exists = alreadyExists(err);
      metrics.kvOps.inc({ bucket, op: 'claim', result: exists ? 'exists' : 'error' });
      if (exists) return false;
      throw err;
    }
  };
}

/**
 * As ClusterClaim, but a key this node created earlier counts as claimed again (its value is the
 * node id): for work one node does once per cluster and resumes after a restart (alerts of the
 * cluster, docs/alerts.md "Once per cluster"). Resolves true when this node holds the key.
 */
export type ClusterClaimOwned = ClusterClaim;

/** A ClusterClaimOwned over this node's link (`op="claim"`, as kvClaim). */
export function kvClaimOwned(link: NatsLink, names: ClusterNames, metrics: ClusterMetrics): ClusterClaimOwned {
  const claim = kvClaim(link, names, metrics);
  return async (bucket, ttlMs, tokens) => {
    if (await claim(bucket, ttlMs, tokens)) return true;
    const key = [names.clusterToken, ...tokens.map(encodeToken)].join('.');
    const entry = await (await link.bucket(bucket, { ttl: ttlMs })).get(key);
    return entry?.operation === 'PUT' && entry.string() === names.node;
  };
}
