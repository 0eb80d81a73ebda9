import { parseDuration } from '../../runtime/config/duration.js';
import { ApiClient } from './client.js';
import { COMMANDS, output } from './commands.js';

/** Exit code of `gslbctl wait` when nothing answered before the timeout (0 ready, 1 answered but not ready). */
export const EXIT_UNREACHABLE = 3;
/** Pause between two attempts. */
const POLL_MS = 200;

/** The last answer of GET /api/v1/health: `ok`, another status (`starting`), or why none came. */
type Probe = { reached: true; status: string } | { reached: false; error: string };

async function probeHealth(base: string, timeoutMs: number): Promise<Probe> {
  try {
    const res = await fetch(`${base}/api/v1/health`, { signal: AbortSignal.timeout(Math.max(1, timeoutMs)) });
    const body = await res.json().catch(() => undefined) as { status?: unknown } | undefined;
    return { reached: true, status: res.ok && typeof body?.status === 'string' ? body.status : `HTTP ${res.status}` };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { reached: false, error: e.name === 'TimeoutError' ? 'no answer' : e.cause?.code ?? e.cause?.message ?? e.message };
  }
}

/**
 * Waits until the daemon is ready: `GET /api/v1/health` answers `{status: "ok"}` (a daemon whose
 * parts are still starting answers `starting`). Polls every POLL_MS until the deadline; each
 * attempt is bounded by the time left. Returns the exit code (0 ready, 1 the daemon answered but
 * was not ready in time, EXIT_UNREACHABLE (3) nothing answered in time) and the last answer, or
 * the last failure when nothing answered.
 */
export async function waitReady(base: string, timeoutMs: number, now: () => number = Date.now): Promise<{ code: number; waitedMs: number; last: Probe }> {
  const start = now();
  const deadline = start + timeoutMs;
  let failure: Probe = { reached: false, error: 'not tried' };
  let answer: Probe | undefined;
  for (;;) {
    const p = await probeHealth(base, Math.min(2000, deadline - now()));
    if (p.reached && p.status === 'ok') return { code: 0, waitedMs: now() - start, last: p };
    if (p.reached) answer = p;
    else failure = p;
    const left = deadline - now();
    // the last answer says more than a final attempt cut short by the deadline
    if (left <= 0) return answer ? { code: 1, waitedMs: now() - start, last: answer } : { code: EXIT_UNREACHABLE, waitedMs: now() - start, last: failure };
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, left)));
  }
}

COMMANDS.wait = {
  usage: 'wait --ready [--timeout 30s] [--server URL]',
  summary: 'wait until the daemon is ready (exit 0; 1 answered but not ready; 3 unreachable before the timeout)',
  values: ['server', 'timeout'],
  booleans: ['ready'],
  async run(flags) {
    if (flags.ready !== true) throw new Error('say what to wait for: --ready');
    const timeout = typeof flags.timeout === 'string' ? flags.timeout : '30s';
    const ms = parseDuration(timeout);
    if (ms === undefined) throw new Error(`--timeout ${timeout}: must be a duration such as 500ms, 10s or 1m`);
    const base = new ApiClient(typeof flags.server === 'string' ? flags.server : undefined).base;
    const r = await waitReady(base, ms);
    const seconds = (r.waitedMs / 1000).toFixed(1);
    const last = r.last.reached ? `status ${r.last.status}` : r.last.error;
    if (r.code === 0) {
      output(flags, { ready: true, server: base, waitedMs: r.waitedMs }, () => `ready: ${base} (after ${seconds} s)`);
    } else if (flags.o === 'json') {
      output(flags, { ready: false, server: base, waitedMs: r.waitedMs, reached: r.last.reached, last }, () => '');
    } else {
      process.stderr.write(`gslbctl wait: not ready: ${base} after ${timeout} (${r.code === EXIT_UNREACHABLE ? 'unreachable: ' : ''}${last})\n`);
    }
    return r.code;
  },
};
