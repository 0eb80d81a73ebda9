/** Timer functions, injectable so tests can drive the scheduler with a fake clock. */
export interface Timers {
  now: () => number;
  set: (fn: () => void, ms: number) => unknown;
  clear: (handle: unknown) => void;
  /** runs `fn` after the I/O that is already waiting has been handled (setImmediate) */
  defer: (fn: () => void) => void;
}

/** The real clock and timers. Timers are unref'd: probes never keep the process alive. */
export const REAL_TIMERS: Timers = {
  now: Date.now,
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
  defer: (fn) => { setImmediate(fn); },
};
