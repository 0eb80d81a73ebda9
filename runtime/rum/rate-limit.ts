import type { LimitPolicy } from '../cluster/port.js';

/** Settings of the per-source token buckets (gslb-api.md §8 "RUM per-source-IP rate"). */
export interface BucketLimits {
  /** tokens added per second (default 2) */
  perSecond: number;
  /** bucket size (default 10) */
  burst: number;
  /** source addresses tracked at most (default 100,000) */
  maxSources: number;
}

export const RUM_RATE_DEFAULTS: BucketLimits = { perSecond: 2, burst: 10, maxSources: 100_000 };

/** The outcome of `take`: allowed, or refused with the seconds until a token is back. */
export type TakeResult = { ok: true } | { ok: false; retryAfterS: number; full: boolean };

/** One source's bucket: the tokens it held at `at` (ms). */
export interface Bucket { tokens: number; at: number }

/** The tokens of `b` at `t`: refilled at `perSecond` since `b.at`, up to `burst`; a full bucket without one. */
function refilled(b: Bucket | undefined, t: number, { perSecond, burst }: BucketLimits): number {
  return b ? Math.min(burst, b.tokens + ((t - b.at) / 1000) * perSecond) : burst;
}

/**
 * The token bucket as a pure policy, for the limiter the nodes of a cluster share (docs/cluster.md
 * "Shared limits"); a state untouched for burst ÷ perSecond seconds is a full bucket again.
 */
export function bucketPolicy(limits: BucketLimits): LimitPolicy<Bucket> {
  return {
    add: (b, n, t) => ({ tokens: refilled(b, t, limits) - n, at: t }),
    room: (b, t) => refilled(b, t, limits),
    waitMs: (b, t) => Math.max(0, ((1 - refilled(b, t, limits)) / limits.perSecond) * 1000),
    size: limits.burst,
    ttlMs: Math.ceil((limits.burst / limits.perSecond) * 1000),
  };
}

/**
 * Token buckets by source address. A bucket refills at `perSecond` up to `burst`; each request
 * takes one. At `maxSources`, a new source may take the place of a bucket only when that bucket is
 * idle and fully refilled (so forgetting it gives nobody extra requests); otherwise the newcomer is
 * refused. Buckets are kept in order of last use, so the least recently used one — the fullest —
 * is the only candidate to look at: O(1). The clock is injected.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly limits: BucketLimits = RUM_RATE_DEFAULTS, private readonly now: () => number = Date.now) {}

  /** Takes one token for `source`. */
  take(source: string): TakeResult {
    const t = this.now();
    const { perSecond, burst } = this.limits;
    let b = this.buckets.get(source);
    if (b) {
      this.buckets.delete(source);
      b.tokens = refilled(b, t, this.limits);
      b.at = t;
    } else {
      if (this.buckets.size >= this.limits.maxSources && !this.evictRefilled(t)) {
        return { ok: false, retryAfterS: this.secondsUntilRefilled(t), full: true };
      }
      b = { tokens: burst, at: t };
    }
    this.buckets.set(source, b);
    if (b.tokens < 1) return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - b.tokens) / perSecond)), full: false };
    b.tokens -= 1;
    return { ok: true };
  }

  /** Sources tracked now. */
  get size(): number {
    return this.buckets.size;
  }

  /** Drops the least recently used bucket if it is fully refilled; true when one went. */
  private evictRefilled(t: number): boolean {
    const first = this.buckets.entries().next();
    if (first.done) return false;
    const [key, b] = first.value;
    if (refilled(b, t, this.limits) < this.limits.burst) return false;
    this.buckets.delete(key);
    return true;
  }

  /** Seconds until the least recently used bucket is full again (when a newcomer may get in). */
  private secondsUntilRefilled(t: number): number {
    const first = this.buckets.values().next();
    if (first.done) return 1;
    const b = first.value;
    const missing = this.limits.burst - refilled(b, t, this.limits);
    return Math.max(1, Math.ceil(missing / this.limits.perSecond));
  }
}
