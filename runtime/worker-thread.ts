import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on the module `entry` names, relative to `base` (the caller's
 * `import.meta.url`), given without extension. The entry is JavaScript once built. Under tsx
 * (tests, benchmarks) it is TypeScript, and a worker thread on Node 20 does not get the loader
 * hooks of `--import tsx`: a small bootstrap registers them in the thread first.
 */
export function startWorkerThread(base: string, entry: string, opts: Omit<WorkerOptions, 'eval'>): Worker {
  if (!base.endsWith('.ts')) return new Worker(new URL(`${entry}.js`, base), opts);
  const url = new URL(`${entry}.ts`, base).href;
  return new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url)}); })`, { ...opts, eval: true });
}
