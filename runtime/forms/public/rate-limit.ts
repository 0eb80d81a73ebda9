/**
 * Requests per key per minute (`forms.rateLimits.perKeyPerMinute`), counted in fixed one-minute
 * windows that start at a key's first request. Per node: each node of a cluster counts its own
 * requests. The clock is injected so tests need not wait.
 */
export class KeyRateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perMinute: number, private readonly now: () => number = Date.now) {}

  /**
   * Counts one request of `key`: 0 when it is allowed, else the whole seconds (at least 1) until
   * the key's window ends, for `Retry-After`. A refused request is not counted.
   */
  hit(key: string): number {
    const t = this.now();
    let w = this.windows.get(key);
    if (!w || t - w.start >= WINDOW_MS) {
      if (this.windows.size >= PRUNE_AT) this.prune(t);
      w = { start: t, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count >= this.perMinute) return Math.max(1, Math.ceil((w.start + WINDOW_MS - t) / 1000));
    w.count++;
    return 0;
  }

  /** Drops ended windows, so keys that stopped calling do not stay in memory. */
  private prune(t: number): void {
    for (const [k, w] of this.windows) if (t - w.start >= WINDOW_MS) this.windows.delete(k);
  }
}

const WINDOW_MS = 60_000;
const PRUNE_AT = 10_000;
