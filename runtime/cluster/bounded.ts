/**
 * Runs `work` and resolves when it settles or when `ms` pass, whichever comes first; `onTimeout` is
 * told when the time ran out (the work itself goes on, unobserved: a NATS call has no way to be
 * cancelled). For periodic repairs whose one run must not hold every later one back.
 */
export function bounded(work: Promise<void>, ms: number, onTimeout: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => { onTimeout(); resolve(); }, ms);
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
