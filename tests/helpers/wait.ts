import { inspect } from 'node:util';

/**
 * The shortest ceiling of any wait in the tests (docs/testing.md "Waiting"). A wait on a condition
 * costs nothing when the condition comes true early, so the ceiling is only ever reached by a
 * real failure; a two-core machine running two test files next to other work can be many times
 * slower than a developer's, and that must never fail a test. Shorter ceilings asked for are
 * raised to this one.
 */
export const WAIT_CEILING_MS = 30_000;

/**
 * The ceiling of a wait for a child process to start (gslbd or gslbctl through tsx): loading and
 * compiling the daemon's modules is the one wait that grows with the machine's load as a whole.
 */
export const START_CEILING_MS = 90_000;

/** What a wait is for and how it reports a timeout. */
export interface WaitOptions {
  /** the ceiling (raised to WAIT_CEILING_MS) */
  timeoutMs?: number;
  /** the pause between two tries */
  everyMs?: number;
  /** more state for the timeout's message (the nodes' logs, a page's text): called once, on timeout */
  describe?: () => unknown;
}

/** One value as it goes into a timeout message: short, on one line. */
export function shown(v: unknown, max = 600): string {
  const s = typeof v === 'string' ? v : inspect(v, { depth: 4, breakLength: Infinity, maxArrayLength: 20, maxStringLength: 200 });
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/**
 * Polls `fn` until it returns a truthy value, which it returns. On reaching the ceiling it throws
 * `timed out after N ms waiting for <what>; last seen: <the last value fn returned, or the last
 * error it threw>` followed by what `describe` gives. An error thrown by `fn` is a try that failed,
 * not the end of the wait.
 */
export async function waitUntil<T>(what: string, fn: () => Promise<T | undefined | null | false | 0 | ''> | T | undefined | null | false | 0 | '', opts: WaitOptions = {}): Promise<T> {
  const timeoutMs = Math.max(opts.timeoutMs ?? 0, WAIT_CEILING_MS);
  const everyMs = opts.everyMs ?? 20;
  const t0 = Date.now();
  let last: { value?: unknown; error?: unknown; tries: number } = { tries: 0 };
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as T;
      last = { value: v, tries: last.tries + 1 };
    } catch (error) {
      last = { error, tries: last.tries + 1 };
    }
    if (Date.now() - t0 >= timeoutMs) break;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  const seen = 'error' in last ? `the last try threw ${shown((last.error as Error)?.message ?? last.error)}` : `last seen: ${shown(last.value)}`;
  let extra = '';
  if (opts.describe) {
    try { extra = `; ${shown(await opts.describe(), 4000)}`; } catch (err) { extra = `; (describe failed: ${String(err)})`; }
  }
  throw new Error(`timed out after ${Date.now() - t0} ms (${last.tries} tries) waiting for ${what}; ${seen}${extra}`);
}

/**
 * Resolves with `p`'s value, or rejects when `p` has not settled within `ceilingMs` (default
 * WAIT_CEILING_MS): for "this ends rather than hangs" (a wait interrupted, a request aborted),
 * where only a hang could reach the ceiling. Never a measure of speed.
 */
export async function settlesBeforeHang<T>(what: string, p: Promise<T>, ceilingMs = WAIT_CEILING_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ceilingMs} ms (a hang)`)), ceilingMs);
  });
  try { return await Promise.race([p, hang]); } finally { clearTimeout(timer); }
}
