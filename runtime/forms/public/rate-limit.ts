import type { LimitPolicy, SharedLimiter, SharedLimits } from '../../cluster/port.js';

/** One key's fixed window: when it started and the requests counted in it. */
export interface WindowState { start: number; count: number }

/**
 * The window rule of `forms.rateLimits` as a pure policy: fixed one-minute windows that start at
 * a key's first request, at most `perMinute` requests in each. Used by the per-node limiter below
 * and, in a cluster, by the shared one (docs/cluster.md "Shared limits").
 */
export function windowPolicy(perMinute: number): LimitPolicy<WindowState> {
  const live = (s: WindowState | undefined, now: number): s is WindowState => s !== undefined && now - s.start < WINDOW_MS;
  return {
    add: (s, n, now) => (live(s, now) ? { start: s.start, count: s.count + n } : { start: now, count: n }),
    room: (s, now) => perMinute - (live(s, now) ? s.count : 0),
    waitMs: (s, now) => (live(s, now) ? s.start + WINDOW_MS - now : 0),
    size: perMinute,
    ttlMs: WINDOW_MS,
  };
}

/** Whole seconds for `Retry-After`, at least 1. */
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Requests per key per minute (`forms.rateLimits.perKeyPerMinute`, `perIpPerMinute`), counted in
 * fixed one-minute windows that start at a key's first request (`windowPolicy`). Per node: each
 * node counts its own requests. The clock is injected so tests need not wait.
 */
export class KeyRateLimiter {
  private readonly windows = new Map<string, WindowState>();
  private readonly policy: LimitPolicy<WindowState>;

  constructor(perMinute: number, private readonly now: () => number = Date.now) {
    this.policy = windowPolicy(perMinute);
  }

  /**
   * Counts one request of `key`: 0 when it is allowed, else the whole seconds (at least 1) until
   * the key's window ends, for `Retry-After`. A refused request is not counted.
   */
  hit(key: string): number {
    const t = this.now();
    const w = this.windows.get(key);
    if ((!w || t - w.start >= WINDOW_MS) && this.windows.size >= PRUNE_AT) this.prune(t);
    if (this.policy.room(w, t) < 1) return seconds(this.policy.waitMs(w, t));
    this.windows.set(key, this.policy.add(w, 1, t));
    return 0;
  }

  /** Drops ended windows, so keys that stopped calling do not stay in memory. */
  private prune(t: number): void {
    for (const [k, w] of this.windows) if (t - w.start >= WINDOW_MS) this.windows.delete(k);
  }
}

/** What the routes ask: 0 when allowed, else the seconds for `Retry-After`. */
export interface RequestLimiter {
  hit(key: string): number | Promise<number>;
}

/**
 * A `forms.rateLimits` limit counted by the whole cluster (docs/cluster.md "Shared limits") when
 * `shared()` gives a limiter and it can tell; else, as on a single node, by the node's own
 * KeyRateLimiter (the per-node fallback while the bus is away).
 */
export class ClusterRateLimiter implements RequestLimiter {
  private readonly local: KeyRateLimiter;
  private shared: SharedLimiter<WindowState> | undefined;

  /** `name` names the limit's KV bucket; `limits()` is the cluster's factory, undefined without a cluster. */
  constructor(private readonly name: string, private readonly perMinute: number, private readonly limits: () => SharedLimits | undefined, now: () => number = Date.now) {
    this.local = new KeyRateLimiter(perMinute, now);
  }

  hit(key: string): number | Promise<number> {
    const limits = this.limits();
    if (!limits) return this.local.hit(key);
    this.shared ??= limits.limiter(this.name, windowPolicy(this.perMinute));
    return this.shared.take(key).then((a) => (a === undefined ? this.local.hit(key) : a.ok ? 0 : seconds(a.waitMs)));
  }
}

const WINDOW_MS = 60_000;
const PRUNE_AT = 10_000;
