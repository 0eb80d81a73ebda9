import { RUM_STORE_DEFAULTS, RumStore } from './store.js';
import { bucketPolicy, RUM_RATE_DEFAULTS, TokenBuckets, type Bucket, type TakeResult } from './rate-limit.js';
import type { SharedLimiter, SharedLimits } from '../cluster/port.js';
import { subnetKey } from './subnet.js';

/** A batch of samples shared with the other nodes (`svc.rum.<cluster>`). */
export interface RumShare { node: string; subnet: string; at: number; samples: { ip: string; ms: number }[] }

/** The RUM state of one node: the store, the limiter, and how accepted samples are recorded. */
export interface RumRuntime {
  store: RumStore;
  limiter: TokenBuckets;
  /**
   * Takes one token for `source`: from the bucket the cluster shares (docs/cluster.md "Shared
   * limits") when there is a cluster that can tell, else from this node's `limiter`.
   */
  take: (source: string) => TakeResult | Promise<TakeResult>;
  limits: { maxSubnets: number; ttlSeconds: number; ratePerSecond: number; burst: number };
  /** true when the licence allows RUM, else the tier the server runs */
  licensed: () => true | string;
  /** stores accepted samples from `source`'s subnet and shares them; false when the address has no subnet */
  record: (source: string, samples: readonly { ip: string; ms: number }[]) => boolean;
  /** samples another node shared */
  receive: (msg: RumShare) => void;
}

/**
 * Builds a node's RUM state. `share` publishes a batch to the other nodes (a no-op without a
 * cluster); samples from peers go into the same store, so every node routes on what any node heard.
 */
export function createRumRuntime(deps: {
  licensed: () => true | string; share: (msg: Omit<RumShare, 'node'>) => void; now?: () => number; limits?: () => SharedLimits | undefined;
}): RumRuntime {
  const now = deps.now ?? Date.now;
  const store = new RumStore(RUM_STORE_DEFAULTS, now);
  const limiter = new TokenBuckets(RUM_RATE_DEFAULTS, now);
  let shared: SharedLimiter<Bucket> | undefined;
  const take = (source: string): TakeResult | Promise<TakeResult> => {
    const limits = deps.limits?.();
    if (!limits) return limiter.take(source);
    shared ??= limits.limiter('rum', bucketPolicy(RUM_RATE_DEFAULTS));
    return shared.take(source).then((a) => (a === undefined ? limiter.take(source)
      : a.ok ? a : { ok: false, retryAfterS: Math.max(1, Math.ceil(a.waitMs / 1000)), full: false }));
  };
  return {
    store, limiter, take, licensed: deps.licensed,
    limits: { maxSubnets: RUM_STORE_DEFAULTS.maxSubnets, ttlSeconds: RUM_STORE_DEFAULTS.ttlMs / 1000, ratePerSecond: RUM_RATE_DEFAULTS.perSecond, burst: RUM_RATE_DEFAULTS.burst },
    record(source, samples) {
      const subnet = subnetKey(source);
      if (subnet === undefined) return false;
      if (samples.length === 0) return true;
      const at = now();
      for (const x of samples) store.add(subnet, x.ip, x.ms, at);
      deps.share({ subnet, at, samples: [...samples] });
      return true;
    },
    receive(msg) {
      // a peer's message is checked as strictly as a beacon: it crossed the network
      if (typeof msg.subnet !== 'string' || subnetKey(msg.subnet.includes(':') ? `${msg.subnet}::` : `${msg.subnet}.0`) !== msg.subnet) return;
      if (!Array.isArray(msg.samples) || msg.samples.length > 32 || typeof msg.at !== 'number') return;
      const at = Math.min(msg.at, now());
      for (const x of msg.samples) {
        if (x && typeof x.ip === 'string' && typeof x.ms === 'number' && x.ms > 0 && x.ms <= 60_000) store.add(msg.subnet, x.ip, x.ms, at);
      }
    },
  };
}
