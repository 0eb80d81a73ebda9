/**
 * Login attempt limits (a decision gslb-config-auth.md §8 leaves open; see docs/auth.md). Failures
 * are counted per account and source address. After `freeFailures` failures in a row, each further
 * attempt must wait `baseDelayMs × 2^(failures − freeFailures)` (capped at `maxDelayMs`) after the
 * last failure, or it is refused with 429 before the password is checked. A success clears the
 * count; counts older than `forgetAfterMs` are dropped. Memory only, per node.
 */
export class LoginLimiter {
  private readonly m = new Map<string, { failures: number; last: number }>();
  constructor(private readonly opts = { freeFailures: 5, baseDelayMs: 30_000, maxDelayMs: 15 * 60_000, forgetAfterMs: 60 * 60_000 },
    private readonly now: () => number = Date.now) {}

  private key(account: string, source: string): string {
    return `${account.trim().toLowerCase()}\u0000${source}`;
  }

  /** Milliseconds until the next attempt is allowed; 0 when allowed now. */
  retryAfterMs(account: string, source: string): number {
    const e = this.m.get(this.key(account, source));
    if (!e) return 0;
    const t = this.now();
    if (t - e.last > this.opts.forgetAfterMs) { this.m.delete(this.key(account, source)); return 0; }
    if (e.failures < this.opts.freeFailures) return 0;
    const wait = Math.min(this.opts.maxDelayMs, this.opts.baseDelayMs * 2 ** (e.failures - this.opts.freeFailures));
    return Math.max(0, e.last + wait - t);
  }

  /** Records a failed attempt. */
  fail(account: string, source: string): void {
    const k = this.key(account, source);
    const e = this.m.get(k) ?? { failures: 0, last: 0 };
    e.failures += 1;
    e.last = this.now();
    this.m.set(k, e);
    if (this.m.size > 100_000) this.m.delete(this.m.keys().next().value!);
  }

  /** Clears the count after a successful login. */
  succeed(account: string, source: string): void {
    this.m.delete(this.key(account, source));
  }
}
