import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../../worker-thread.js';
import type { Logger } from '../../log/logger.js';
import type { RenderJob, RenderOutcome } from './liquid-render.js';
import { RenderBusyError, TemplateError } from './template-error.js';

/** The pool's bounds (`forms.render`, docs/forms.md "Templates"). */
export interface RenderPoolOptions {
  /** worker threads at most (started on demand) */
  workers: number;
  /** wall-clock limit of one render (ms): past it the thread is terminated and replaced */
  timeoutMs: number;
  /** renders of one tenant running at once */
  perTenant: number;
  /** renders of one tenant waiting for a thread; past it the pool answers RenderBusyError */
  queuePerTenant: number;
  log?: Logger;
  /** starts a thread (tests inject a slow one); default: render-worker.ts */
  spawn?: () => Worker;
}

interface Pending { id: number; tenant: string; job: RenderJob; resolve: (out: string) => void; reject: (err: Error) => void }
interface Slot { worker: Worker | undefined; job: Pending | undefined; timer: NodeJS.Timeout | undefined }

/** Heap of one render thread (MB): a template that allocates past it ends the thread (a template failure). */
const HEAP_MB = 128;

const spawnRenderWorker = (): Worker => startWorkerThread(import.meta.url, './render-worker', {
  name: 'gslbd-render', execArgv: [], resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
});

/**
 * Renders tenants' Liquid templates off the main thread (DESIGN decision 16; docs/forms.md
 * "Templates") in at most `workers` threads. Each render has a hard wall-clock limit, counted from
 * the moment its thread begins it (a new thread's start-up is not counted): the thread is
 * terminated, not asked, and a new one takes its place for the next render; the render fails with
 * a {@link TemplateError} saying the limit was hit. At most `perTenant` renders of one tenant run
 * at once and `queuePerTenant` more wait; another is refused at once with a
 * {@link RenderBusyError}. A free thread takes a waiting render of the tenant with the fewest
 * running (the earliest of its renders), so one tenant's queue does not hold another's back.
 */
export class RenderPool {
  private readonly slots: Slot[] = [];
  private waiting: Pending[] = [];
  private readonly running = new Map<string, number>();
  private nextId = 0;
  private closed = false;
  /** threads terminated at the limit (or lost) and replaced */
  replaced = 0;

  constructor(private readonly o: RenderPoolOptions) {
    for (let i = 0; i < Math.max(1, o.workers); i++) this.slots.push({ worker: undefined, job: undefined, timer: undefined });
  }

  /** Renders `job` for `tenant`. Rejects with TemplateError (the template, or a limit) or RenderBusyError (no room). */
  render(tenant: string, job: RenderJob): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the render pool is stopped'));
    const queued = this.waiting.filter((p) => p.tenant === tenant).length;
    if ((this.running.get(tenant) ?? 0) + queued >= this.o.perTenant + this.o.queuePerTenant) {
      const s = Math.max(1, Math.ceil(this.o.timeoutMs / 1000));
      return Promise.reject(new RenderBusyError(`too many template renders of this workspace at once; retry in ${s} s`, s));
    }
    return new Promise<string>((resolve, reject) => {
      this.waiting.push({ id: this.nextId++, tenant, job, resolve, reject });
      this.pump();
    });
  }

  /** Renders running and waiting now, over every tenant (and for one tenant when named). */
  stats(tenant?: string): { running: number; waiting: number } {
    const busy = this.slots.filter((s) => s.job && (tenant === undefined || s.job.tenant === tenant)).length;
    return { running: busy, waiting: this.waiting.filter((p) => tenant === undefined || p.tenant === tenant).length };
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const i = this.next();
      if (i < 0) return;
      const [p] = this.waiting.splice(i, 1);
      this.start(slot, p!);
    }
  }

  /** The waiting render to start: of the tenants under their cap, the one with fewest running; the earliest of its renders. */
  private next(): number {
    let best = -1;
    let fewest = Infinity;
    this.waiting.forEach((p, i) => {
      const n = this.running.get(p.tenant) ?? 0;
      if (n < this.o.perTenant && n < fewest) { best = i; fewest = n; }
    });
    return best;
  }

  private start(slot: Slot, p: Pending): void {
    slot.job = p;
    this.running.set(p.tenant, (this.running.get(p.tenant) ?? 0) + 1);
    const w = slot.worker ?? this.hire(slot);
    w.postMessage({ id: p.id, job: p.job });
  }

  /** Starts the limit of the render a slot's thread began (its `started` message). */
  private arm(slot: Slot, p: Pending): void {
    slot.timer = setTimeout(() => {
      this.o.log?.warn({ tenant: p.tenant, part: p.job.part, timeoutMs: this.o.timeoutMs }, 'template render ended at its time limit');
      this.retire(slot);
      this.finish(slot, () => p.reject(new TemplateError(`${p.job.part}: template error: render time limit exceeded (${this.o.timeoutMs} ms); the render was ended`)));
    }, this.o.timeoutMs);
  }

  private hire(slot: Slot): Worker {
    const w = (this.o.spawn ?? spawnRenderWorker)();
    w.unref();
    slot.worker = w;
    w.on('message', (m: (RenderOutcome | { started: true }) & { id: number }) => {
      const p = slot.job;
      if (!p || p.id !== m.id || slot.worker !== w) return;
      if ('started' in m) { this.arm(slot, p); return; }
      this.finish(slot, () => (m.ok ? p.resolve(m.out) : p.reject(new TemplateError(m.message))));
    });
    const lost = (why: string) => {
      if (slot.worker !== w) return;
      slot.worker = undefined;
      this.replaced++;
      const p = slot.job;
      if (p) this.finish(slot, () => p.reject(new TemplateError(`${p.job.part}: template error: ${why}; the render was ended`)));
    };
    w.on('error', (err: NodeJS.ErrnoException) => {
      lost(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'render memory limit exceeded' : 'the render failed');
    });
    w.on('exit', () => lost('the render failed'));
    return w;
  }

  /** Terminates a slot's thread; the slot starts a new one for its next render. */
  private retire(slot: Slot): void {
    const w = slot.worker;
    slot.worker = undefined;
    if (!w) return;
    this.replaced++;
    void w.terminate();
  }

  private finish(slot: Slot, settle: () => void): void {
    const p = slot.job;
    if (!p) return;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
    const n = (this.running.get(p.tenant) ?? 1) - 1;
    if (n > 0) this.running.set(p.tenant, n); else this.running.delete(p.tenant);
    settle();
    if (!this.closed) this.pump();
  }

  /** Ends every thread; renders running or waiting fail (not as template failures: a delivery is retried). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const stopped = new Error('the render pool is stopped');
    for (const p of this.waiting) p.reject(stopped);
    this.waiting = [];
    const exits: Promise<number>[] = [];
    for (const slot of this.slots) {
      const w = slot.worker;
      slot.worker = undefined;
      const p = slot.job;
      if (p) this.finish(slot, () => p.reject(stopped));
      if (w) exits.push(w.terminate());
    }
    await Promise.all(exits);
  }
}
