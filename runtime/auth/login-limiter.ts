import type { LimitPolicy, SharedLimiter, SharedLimits } from '../cluster/port.js';

/** The settings of the login limits (docs/auth.md "Login attempt limits"). */
export interface LoginLimits { freeFailures: number; baseDelayMs: number; maxDelayMs: number; forgetAfterMs: number }

export const LOGIN_LIMITS: LoginLimits = { freeFailures: 5, baseDelayMs: 30_000, maxDelayMs: 15 * 60_000, forgetAfterMs: 60 * 60_000 };

/** Failures in a row of one account and source, and when the last one was. */
export interface FailureState { failures: number; last: number }

/**
 * The login rule as a pure policy (also the state the nodes of a cluster share): after
 * `freeFailures` failures in a row, the next attempt must wait `baseDelayMs × 2^(failures −
 * freeFailures)` (capped at `maxDelayMs`) after the last failure; a count untouched for
 * `forgetAfterMs` is forgotten.
 */
export function loginPolicy(o: LoginLimits): LimitPolicy<FailureState> {
  const live = (s: FailureState | undefined, now: number): s is FailureState => s !== undefined && now - s.last <= o.forgetAfterMs;
  const waitMs = (s: FailureState | undefined, now: number): number => {
    if (!live(s, now) || s.failures < o.freeFailures) return 0;
    return Math.max(0, s.last + Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (s.failures - o.freeFailures)) - now);
  };
  return {
    add: (s, n, now) => ({ failures: (live(s, now) ? s.failures : 0) + n, last: now }),
    room: (s, now) => (waitMs(s, now) > 0 ? 0 : 1),
    waitMs,
    size: o.freeFailures,
    ttlMs: o.forgetAfterMs,
  };
}

/** The key of one account and source. */
function keyOf(account: string, source: string): string {
  return `${account.trim().toLowerCase()}\u0000${source}`;
}

/**
 * Login attempt limits (a decision gslb-config-auth.md §8 leaves open; see docs/auth.md). Failures
 * are counted per account and source address (`loginPolicy`); an attempt while the delay runs is
 * refused with 429 before the password is checked. A success clears the count. Memory only, per
 * node.
 */
export class LoginLimiter {
  private readonly m = new Map<string, FailureState>();
  private readonly policy: LimitPolicy<FailureState>;
  constructor(private readonly opts: LoginLimits = LOGIN_LIMITS, private readonly now: () => number = Date.now) {
    this.policy = loginPolicy(opts);
  }

  /** Milliseconds until the next attempt is allowed; 0 when allowed now. */
  retryAfterMs(account: string, source: string): number {
    const k = keyOf(account, source);
    const e = this.m.get(k);
    if (!e) return 0;
    const t = this.now();
    if (t - e.last > this.opts.forgetAfterMs) { this.m.delete(k); return 0; }
    return this.policy.waitMs(e, t);
  }

  /** Records a failed attempt. */
  fail(account: string, source: string): void {
    const k = keyOf(account, source);
    this.m.set(k, this.policy.add(this.m.get(k), 1, this.now()));
    if (this.m.size > 100_000) this.m.delete(this.m.keys().next().value!);
  }

  /** Clears the count after a successful login. */
  succeed(account: string, source: string): void {
    this.m.delete(keyOf(account, source));
  }
}

/**
 * The login limits of a cluster (docs/cluster.md "Shared limits"): the failures of an account and
 * source are counted in KV by every node, so an attacker spreading attempts over N nodes gets the
 * free failures once, not N times. Each failure is written through (a login already waits for
 * bcrypt). This node's own LoginLimiter counts too, and answers alone without a cluster or while
 * the cluster cannot tell (the bus is away).
 */
export class ClusterLoginLimiter {
  private readonly local: LoginLimiter;
  private readonly policy: LimitPolicy<FailureState>;
  private shared: SharedLimiter<FailureState> | undefined;

  constructor(private readonly limits: () => SharedLimits | undefined, opts: LoginLimits = LOGIN_LIMITS, private readonly now: () => number = Date.now) {
    this.local = new LoginLimiter(opts, now);
    this.policy = loginPolicy(opts);
  }

  private cluster(): SharedLimiter<FailureState> | undefined {
    const limits = this.limits();
    if (limits) this.shared ??= limits.limiter('login', this.policy);
    return limits ? this.shared : undefined;
  }

  /** Milliseconds until the next attempt is allowed; 0 when allowed now. */
  async retryAfterMs(account: string, source: string): Promise<number> {
    const local = this.local.retryAfterMs(account, source);
    // the cluster's count when it can tell (a success on another node cleared it), else this node's
    const got = await this.cluster()?.read(keyOf(account, source));
    return got === undefined ? local : this.policy.waitMs(got.state, this.now());
  }

  /** Records a failed attempt. */
  async fail(account: string, source: string): Promise<void> {
    this.local.fail(account, source);
    await this.cluster()?.add(keyOf(account, source), 1);
  }

  /** Clears the count after a successful login. */
  async succeed(account: string, source: string): Promise<void> {
    this.local.succeed(account, source);
    await this.cluster()?.reset(keyOf(account, source));
  }
}
