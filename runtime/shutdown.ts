/**
 * The bounded stop sequence (docs/architecture.md "Shutdown"): the daemon's parts stop one after
 * another, last started first, and no part can hold the process: each stop is awaited for at most
 * `partMs`, and the whole sequence for at most `totalMs`. A part that is not done by then is named
 * in the report and left behind; the sequence goes on with the next one, so a stuck part does not
 * keep the others (the BGP withdrawals, the listeners, the database) from stopping.
 */

import type { Logger } from './log/logger.js';

/** One part's share of the shutdown: its closers, run last registered first. */
export interface StopStep {
  part: string;
  closers: (() => Promise<void> | void)[];
}

/** What a shutdown did: the parts not done within their bound (in stop order), and the time it took. */
export interface StopReport {
  notStopped: string[];
  ms: number;
}

/** How long one part may take to stop, unless the daemon is told otherwise. */
export const PART_STOP_MS = 5_000;
/** How long the whole stop sequence may take, unless the daemon is told otherwise. */
export const SHUTDOWN_MS = 10_000;

export interface StopOptions {
  /** the bound of one part (default PART_STOP_MS) */
  partMs?: number;
  /** the bound of the whole sequence (default SHUTDOWN_MS) */
  totalMs?: number;
  /** a closer that threw: logged, and the part counts as stopped (it will not finish later either) */
  onError?: (part: string, err: unknown) => void;
  /** a part that finished, with the time it took (debug logging) */
  onStopped?: (part: string, ms: number) => void;
  now?: () => number;
}

/**
 * Runs `steps` in reverse order, each bounded as described above. Resolves (never rejects) once
 * every step is done or has had its time, and at the latest about `totalMs` after the call: the
 * steps not reached by then are named without being run.
 */
export async function stopInOrder(steps: readonly StopStep[], opts: StopOptions = {}): Promise<StopReport> {
  const now = opts.now ?? Date.now;
  const partMs = opts.partMs ?? PART_STOP_MS;
  const start = now();
  const end = start + (opts.totalMs ?? SHUTDOWN_MS);
  const notStopped: string[] = [];
  for (const step of [...steps].reverse()) {
    const left = end - now();
    if (left <= 0) { notStopped.push(step.part); continue; }
    const t0 = now();
    const done = await within(runStep(step, opts.onError), Math.min(partMs, left));
    if (done) opts.onStopped?.(step.part, now() - t0);
    else notStopped.push(step.part);
  }
  return { notStopped, ms: now() - start };
}

/** Runs one step's closers in reverse; a closer that throws is reported and the next one runs. */
async function runStep(step: StopStep, onError: StopOptions['onError']): Promise<void> {
  for (const c of [...step.closers].reverse()) {
    try { await c(); } catch (err) { onError?.(step.part, err); }
  }
}

/** True when `p` settles within `ms`; the timer does not outlive the wait. */
async function within(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  try {
    return await Promise.race([p.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Logs how a shutdown went: `stopped` (info) when every part stopped, else the warning
 * `shutdown: parts did not stop in time` naming each part once. Returns true when every part stopped.
 */
export function logStopReport(log: Logger, report: StopReport): boolean {
  const parts = [...new Set(report.notStopped)];
  if (parts.length) log.warn({ parts, ms: report.ms }, 'shutdown: parts did not stop in time');
  else log.info({ ms: report.ms }, 'stopped');
  return parts.length === 0;
}
