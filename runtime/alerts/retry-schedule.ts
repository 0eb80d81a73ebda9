/**
 * The environment variable that replaces the alert retry schedule: comma-separated waits in
 * milliseconds, one per retry (`100,200,400`). Meant for tests and alerting drills; production
 * keeps the specified 2 s, 4 s, 8 s.
 */
export const ALERT_RETRY_ENV = 'GSLBD_ALERT_RETRY_DELAYS_MS';

/**
 * Parses a value of GSLBD_ALERT_RETRY_DELAYS_MS. Returns the waits, or a string saying why the
 * value is refused (empty entries, non-integers, negatives, more than 10 retries or a wait above
 * one hour).
 */
export function parseRetryDelays(text: string): readonly number[] | string {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length > 10) return 'at most 10 retries';
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d+$/.test(p)) return `"${p}" is not a whole number of milliseconds`;
    const ms = Number(p);
    // a wait beyond an hour is a typo (seconds for milliseconds), not a schedule
    if (ms > 3_600_000) return `${p} ms is more than one hour`;
    out.push(ms);
  }
  return out;
}
