/**
 * CPU time of the calling thread, in milliseconds (user + system, process.threadCpuUsage). Unlike
 * the wall clock it does not grow while the thread waits for a core, so a comparison of two spans
 * of work measured with it holds on a loaded machine (docs/testing.md "Waiting"). The kernel
 * accounts it in scheduler ticks: spans of a few milliseconds read as 0 or a tick or two.
 */
export function threadCpuMs(): number {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Runs `fn` while a timer ticks every `everyMs`, and returns its result with the most CPU time
 * this thread spent between two ticks (`blockMs`: the longest stretch the event loop was held by
 * work, however long a loaded machine made it wait) and the CPU time of the whole run (`totalMs`).
 */
export async function longestBlock<T>(fn: () => Promise<T>, everyMs = 5): Promise<{ result: T; blockMs: number; totalMs: number }> {
  const t0 = threadCpuMs();
  let last = t0;
  let blockMs = 0;
  const tick = setInterval(() => { const now = threadCpuMs(); blockMs = Math.max(blockMs, now - last); last = now; }, everyMs);
  try {
    const result = await fn();
    await new Promise((r) => setTimeout(r, everyMs * 4)); // the tick after a block measures it
    blockMs = Math.max(blockMs, threadCpuMs() - last);
    return { result, blockMs, totalMs: threadCpuMs() - t0 };
  } finally {
    clearInterval(tick);
  }
}
