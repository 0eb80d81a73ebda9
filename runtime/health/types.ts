import type { HealthCheckFields } from '../../core/model/types.js';

/** One endpoint to probe: a (pool, IP) pair with the pool's check (gslb-api.md §2 "HealthCheck"). */
export interface CheckTarget {
  /** `${poolId}|${ip}`: the identity the scheduler, the state machine and the HealthView share */
  key: string;
  poolId: string;
  ip: string;
  /** the check's port (members of a pool are probed on the check's port, not their own) */
  port: number;
  check: HealthCheckFields;
  /** identity of the check's settings; a different value restarts the target's checker */
  checkKey: string;
  /** id of the health check row (or `static` for the file-defined check), for logs */
  checkId: string;
}

/** Outcome of one probe. `rttMs` is the measured round trip (0 when nothing answered). */
export interface CheckResult {
  ok: boolean;
  rttMs: number;
  /** short human-readable reason (`connect ECONNREFUSED`, `status 503`, `exit 1`) */
  detail: string;
}

/**
 * One probe type. `check` never throws: every failure, including the abort of `signal` when the
 * probe's timeout passes, resolves to `{ok: false}`. The caller owns the timeout.
 */
export interface Checker {
  check(target: CheckTarget, signal: AbortSignal): Promise<CheckResult>;
  /**
   * Optional direct interface, used by the scheduler when present: starts a probe and returns a
   * handle for `cancel`; `finish(ctx, ok, rttMs, detail)` is called exactly once, possibly
   * synchronously (a probe that could not start), unless `cancel(handle)` ran first. No Promise,
   * AbortController or result object per probe, and `finish` is one function for all probes. The
   * probe may start a little later in the same turn of the event loop (the native TCP checker
   * starts the probes of a turn in one batch).
   */
  start?(target: CheckTarget, ctx: unknown, finish: ProbeFinish): number;
  /** Stops a probe started by `start` (timeout or target stopped); its `finish` is not called. */
  cancel?(handle: number): void;
}

/** Completion callback of {@link Checker.start}: `ctx` is the value given to `start`; the fields of a {@link CheckResult}. */
// `any`: each checker user picks its own context type.
export type ProbeFinish = (ctx: any, ok: boolean, rttMs: number, detail: string) => void;

/** Builds a target key from pool id and IP. */
export function targetKey(poolId: string, ip: string): string {
  return `${poolId}|${ip}`;
}

/** Milliseconds since `start` (a `performance.now()` value), rounded to 0.01 ms. */
export function elapsedMs(start: number): number {
  return Math.round((performance.now() - start) * 100) / 100;
}

/** The message of an error-like value, for `detail`. */
export function describeError(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: string; message?: string; name?: string };
    if (e.name === 'AbortError') return 'timeout';
    if (e.code && e.message && !e.message.includes(e.code)) return `${e.code} ${e.message}`;
    if (e.message) return e.message;
  }
  return String(err);
}
