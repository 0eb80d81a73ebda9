import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseDuration } from '../runtime/config/duration.js';
import { ApiClient } from './client.js';
import { COMMANDS, output } from './commands.js';
import { inputError } from './exit-codes.js';

/** Exit code of `gslbctl wait` when nothing answered before the timeout (0 ready, 1 answered but not ready). */
export const EXIT_UNREACHABLE = 3;
/** Pause between two attempts. */
const POLL_MS = 200;

/** The last outcome of one attempt: the condition held, the daemon answered something else, or why nothing answered. */
type Probe = { reached: true; ok: boolean; status: string } | { reached: false; error: string; gone?: boolean };

const reason = (err: unknown): string => {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  return e.name === 'TimeoutError' ? 'no answer' : e.cause?.code ?? e.cause?.message ?? e.message;
};

/** GET /api/v1/health: the condition holds when it answers `{status: "ok"}` (`starting` while parts start). */
async function probeHealth(base: string, timeoutMs: number): Promise<Probe> {
  try {
    const res = await fetch(`${base}/api/v1/health`, { signal: AbortSignal.timeout(Math.max(1, timeoutMs)) });
    const body = await res.json().catch(() => undefined) as { status?: unknown } | undefined;
    const status = res.ok && typeof body?.status === 'string' ? body.status : `HTTP ${res.status}`;
    return { reached: true, ok: status === 'ok', status };
  } catch (err) {
    return { reached: false, error: reason(err) };
  }
}

/**
 * POST /api/v1/simulate for `name` from 127.0.0.1: the condition holds when the answer's addresses
 * are exactly `want` (in any order). The simulation runs the server's own selection, health included.
 */
async function probeAnswer(client: ApiClient, name: string, want: string[], timeoutMs: number): Promise<Probe> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (process.env.GSLB_API_KEY) headers.authorization = `Bearer ${process.env.GSLB_API_KEY}`;
  try {
    const res = await fetch(`${client.base}/api/v1/simulate`, {
      method: 'POST', headers, signal: AbortSignal.timeout(Math.max(1, timeoutMs)),
      body: JSON.stringify({ name, clientIp: '127.0.0.1', type: want.some((a) => isIP(a) === 6) ? 'AAAA' : 'A' }),
    });
    const body = await res.json().catch(() => undefined) as { rcode?: string; answers?: { data?: unknown }[]; error?: string } | undefined;
    if (!res.ok) return { reached: true, ok: false, status: `HTTP ${res.status}${body?.error ? `: ${body.error}` : ''}` };
    const got = (body?.answers ?? []).map((a) => String(a.data)).sort();
    const ok = got.length === want.length && got.every((a, i) => a === want[i]);
    return { reached: true, ok, status: got.length ? `answers ${got.join(', ')}` : `answers nothing (${body?.rcode ?? '?'})` };
  } catch (err) {
    return { reached: false, error: reason(err) };
  }
}

/** Whether process `pid` still runs (a zombie, exited but not yet reaped, does not). */
export function processRuns(pid: number): boolean {
  try { process.kill(pid, 0); } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM'; }
  try { return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return true; }
}

/**
 * Polls `probe` every POLL_MS until it holds or the deadline passes; each attempt is bounded by the
 * time left. With `pid`, a process that has exited ends the wait at once (exit 3). Returns the exit
 * code (0 held, 1 the daemon answered but the condition did not hold in time, EXIT_UNREACHABLE (3)
 * nothing answered in time or the process is gone) and the last answer, or the last failure when
 * nothing answered.
 */
export async function waitUntil(probe: (leftMs: number) => Promise<Probe>, timeoutMs: number, pid?: number, now: () => number = Date.now): Promise<{ code: number; waitedMs: number; last: Probe }> {
  const start = now();
  const deadline = start + timeoutMs;
  let failure: Probe = { reached: false, error: 'not tried' };
  let answer: Probe | undefined;
  for (;;) {
    if (pid !== undefined && !processRuns(pid)) return { code: EXIT_UNREACHABLE, waitedMs: now() - start, last: { reached: false, error: `process ${pid} has exited`, gone: true } };
    const p = await probe(Math.min(2000, deadline - now()));
    if (p.reached && p.ok) return { code: 0, waitedMs: now() - start, last: p };
    if (p.reached) answer = p;
    else failure = p;
    const left = deadline - now();
    // the last answer says more than a final attempt cut short by the deadline
    if (left <= 0) return answer ? { code: 1, waitedMs: now() - start, last: answer } : { code: EXIT_UNREACHABLE, waitedMs: now() - start, last: failure };
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, left)));
  }
}

/** Waits until GET /api/v1/health answers ok (see waitUntil for the result). */
export const waitReady = (base: string, timeoutMs: number, pid?: number, now: () => number = Date.now) =>
  waitUntil((left) => probeHealth(base, left), timeoutMs, pid, now);

/** `NAME=IP[,IP…]` of `--answer`: the name and the sorted addresses. */
function parseAnswer(v: string): { name: string; want: string[] } {
  const m = /^([^=\s]+)=(.+)$/.exec(v);
  const want = m ? m[2]!.split(',').map((a) => a.trim()).filter(Boolean).sort() : [];
  if (!m || want.length === 0 || want.some((a) => isIP(a) === 0) || new Set(want.map(isIP)).size > 1) {
    throw inputError(`--answer ${v}: must be NAME=IP[,IP…] with addresses of one family, e.g. gslb.example.test=127.0.0.11`);
  }
  return { name: m[1]!, want };
}

COMMANDS.wait = {
  usage: 'wait (--ready | --answer NAME=IP[,IP…]) [--pid PID] [--timeout 30s] [--server URL]',
  summary: 'wait until the daemon is ready, or until NAME answers exactly these addresses (exit 0; 1 answered otherwise; 3 unreachable before the timeout, or --pid has exited)',
  values: ['server', 'timeout', 'answer', 'pid'],
  booleans: ['ready'],
  async run(flags) {
    const answer = typeof flags.answer === 'string' ? parseAnswer(flags.answer) : undefined;
    if ((flags.ready === true) === (answer !== undefined)) throw new Error('say what to wait for: --ready or --answer NAME=IP[,IP…] (one of them)');
    const timeout = typeof flags.timeout === 'string' ? flags.timeout : '30s';
    const ms = parseDuration(timeout);
    if (ms === undefined) throw new Error(`--timeout ${timeout}: must be a duration such as 500ms, 10s or 1m`);
    const pid = typeof flags.pid === 'string' ? Number(flags.pid) : undefined;
    if (pid !== undefined && !(Number.isInteger(pid) && pid > 0)) throw inputError(`--pid ${String(flags.pid)}: must be a process id`);
    const client = new ApiClient(typeof flags.server === 'string' ? flags.server : undefined);
    const base = client.base;
    const r = answer
      ? await waitUntil((left) => probeAnswer(client, answer.name, answer.want, left), ms, pid)
      : await waitReady(base, ms, pid);
    const seconds = (r.waitedMs / 1000).toFixed(1);
    const what = answer ? `${answer.name} answers ${answer.want.join(', ')}` : 'ready';
    const last = r.last.reached ? (answer ? r.last.status : `status ${r.last.status}`) : r.last.error;
    if (r.code === 0) {
      output(flags, answer ? { answered: true, server: base, name: answer.name, addresses: answer.want, waitedMs: r.waitedMs } : { ready: true, server: base, waitedMs: r.waitedMs },
        () => `${answer ? `${what}` : `ready: ${base}`} (after ${seconds} s)`);
    } else if (flags.o === 'json') {
      output(flags, { [answer ? 'answered' : 'ready']: false, server: base, waitedMs: r.waitedMs, reached: r.last.reached, last }, () => '');
    } else if (!r.last.reached && r.last.gone) {
      process.stderr.write(`gslbctl wait: not ${answer ? 'answered' : 'ready'}: ${last} (after ${seconds} s); its output says why\n`);
    } else {
      process.stderr.write(`gslbctl wait: ${answer ? `${answer.name} does not answer ${answer.want.join(', ')}` : 'not ready'}: ${base} after ${timeout} (${r.code === EXIT_UNREACHABLE ? 'unreachable: ' : ''}${last})\n`);
    }
    return r.code;
  },
};
