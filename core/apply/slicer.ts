import { performance } from 'node:perf_hooks';

/** Lets the event loop run: resolves in the check phase of the next turn, after pending I/O (DNS packets) was handled. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => { setImmediate(resolve); });

/**
 * Cuts long main-thread work into slices of about `budgetMs` (docs/architecture.md "Large
 * applies"): the worker loop asks `due()` after each item (one clock read) and, when it is due,
 * `await pause()` lets the event loop answer queries and requests before the next slice.
 */
export class Slicer {
  private start = performance.now();
  /** slices cut so far */
  slices = 0;
  /** the longest slice so far, in ms */
  longest = 0;

  constructor(readonly budgetMs = 10, private readonly yieldFn: () => Promise<void> = nextTurn) {}

  /** True when the current slice has used its budget. */
  due(): boolean {
    return performance.now() - this.start >= this.budgetMs;
  }

  /** Ends the current slice, lets the event loop run, and starts the next one. */
  async pause(): Promise<void> {
    const took = performance.now() - this.start;
    if (took > this.longest) this.longest = took;
    this.slices++;
    await this.yieldFn();
    this.start = performance.now();
  }

  /** `pause()` when the slice is due; otherwise nothing. */
  async maybePause(): Promise<void> {
    if (this.due()) await this.pause();
  }
}

/** Runs work written as steps (a generator that yields between parts) in slices of `slicer`; returns its result. */
export async function runSliced<T>(steps: Generator<void, T, void>, slicer: Slicer): Promise<T> {
  for (let r = steps.next(); ; r = steps.next()) {
    if (r.done) return r.value;
    await slicer.maybePause();
  }
}

/** Runs work written as steps all at once (a caller that does not share the DNS thread, such as the CLI); returns its result. */
export function runAtOnce<T>(steps: Generator<void, T, void>): T {
  for (let r = steps.next(); ; r = steps.next()) if (r.done) return r.value;
}
