/** Reconnect waits: exponential from `baseMs`, capped at `maxMs`, each spread by ±`jitter`. */
export interface BackoffOptions { baseMs: number; maxMs: number; jitter: number; random: () => number }

/** 1 s doubling to 30 s, ±20 %: a restarted peer is found again within seconds, a dead one costs little. */
export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 30_000, jitter: 0.2, random: Math.random };

/** The wait before connection attempt `attempt` (0 for the first retry). Pure apart from `random`. */
export function backoffDelay(attempt: number, o: BackoffOptions = DEFAULT_BACKOFF): number {
  const raw = Math.min(o.maxMs, o.baseMs * 2 ** Math.min(attempt, 30));
  return Math.max(0, Math.round(raw * (1 + o.jitter * (2 * o.random() - 1))));
}
