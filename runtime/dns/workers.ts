import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../worker-thread.js';
import type { Logger } from '../log/logger.js';
import type { IndexImage } from './index-image.js';
import { DNS_METRICS_BYTES, type DnsMetrics } from './metrics.js';
import type { HealthBoardBuffers } from './health-board.js';
import type { FromWorker, RumSample, ToWorker, WorkerInit } from './worker-protocol.js';

/** What the main thread gives its DNS workers. */
export interface DnsWorkersOptions {
  /** worker threads to start (dns.workers) */
  count: number;
  /** everything of WorkerInit but the worker's number and metrics cells */
  init: Omit<WorkerInit, 'index' | 'metrics'>;
  log: Logger;
  /** the main thread's metrics: each worker's cells are added to what it exports */
  metrics: DnsMetrics;
  /** answers a packet a worker forwarded (RFC 2136 UPDATE) once it is carried out; null: no reply */
  answer: (req: Buffer, src: string) => Promise<Buffer | null>;
  /** how long an apply may wait for every worker to serve it before the wait gives up (ms) */
  settleTimeoutMs?: number;
  /** the whole index image as it is now (sent to a worker that asks for a resync) */
  current: () => IndexImage;
  /** told of each resync a worker asked for (counted as `gslbd_dns_worker_resyncs_total`) */
  onResync?: () => void;
  /** told when the last running worker exited while not closing (the main thread then answers UDP again) */
  onNoneLeft?: () => void;
}

const newWorker = (init: WorkerInit, name: string): Worker => startWorkerThread(import.meta.url, './worker-main', { workerData: init, name, execArgv: [] });

/**
 * The DNS worker threads of one listener (docs/dns.md "Workers"). `start` spawns them with the
 * current index image and resolves once each has joined the UDP SO_REUSEPORT group (or rejects
 * with the first one's bind error). `image` posts a change of the index image to every worker and
 * numbers it; `settled()` resolves when every worker has acknowledged the newest number, i.e.
 * serves that revision (undefined when they all do already). `close` stops them and waits for every thread to
 * exit (terminating one that does not within 2 s).
 */
export class DnsWorkers {
  private readonly workers: Worker[] = [];
  private readonly acked: number[] = [];
  private gen = 0;
  private waiters: { gen: number; resolve: () => void }[] = [];
  private closing = false;
  private live = 0;

  private constructor(private readonly o: DnsWorkersOptions) {}

  /** Spawns the workers; the image in `o.init` must be the current one (later changes go through `image`). */
  static start(o: DnsWorkersOptions): { workers: DnsWorkers; ready: Promise<void> } {
    const w = new DnsWorkers(o);
    const ready: Promise<void>[] = [];
    for (let i = 1; i <= o.count; i++) ready.push(w.spawn(i));
    return { workers: w, ready: Promise.all(ready).then(() => undefined) };
  }

  private spawn(index: number): Promise<void> {
    const o = this.o;
    const metrics = new SharedArrayBuffer(DNS_METRICS_BYTES);
    o.metrics.addWorker(metrics);
    const init: WorkerInit = { ...o.init, index, metrics };
    const worker = newWorker(init, `gslbd-dns-${index}`);
    this.workers.push(worker);
    this.live++;
    this.acked.push(0);
    const slot = this.acked.length - 1;
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (m: FromWorker) => {
        switch (m.t) {
          case 'ready': resolve(); break;
          case 'failed': reject(Object.assign(new Error(m.message), { code: m.code })); break;
          case 'ack': this.acked[slot] = m.gen; this.wake(); break;
          case 'resync':
            // The worker could not take image m.gen: it gets the whole image as of now, acknowledged
            // as the newest (those after m.gen that it receives before the reset are replaced).
            o.log.warn({ worker: index, gen: m.gen }, 'dns worker asked for a resync; sending the whole index image');
            o.onResync?.();
            this.post(worker, { t: 'reset', gen: this.gen, image: o.current() });
            break;
          case 'log':
            for (const [level, fields, msg] of m.lines) o.log[level]({ ...fields, worker: index }, msg);
            break;
          case 'forward': {
            const req = Buffer.from(m.req.buffer, m.req.byteOffset, m.req.byteLength);
            void (async () => {
              let reply: Buffer | null = null;
              try { reply = await o.answer(req, m.src); } catch (err) { o.log.error({ err, worker: index }, 'dns answer failed'); }
              // The reply goes out once every worker serves what the update wrote.
              await this.settled();
              this.post(worker, { t: 'reply', id: m.id, reply });
            })();
            break;
          }
        }
      });
      worker.on('error', (err) => { o.log.error({ err, worker: index }, 'dns worker failed'); reject(err); });
      worker.on('exit', (code) => {
        // A worker gone is not waited for (its acknowledgement never comes).
        this.acked[slot] = Infinity;
        this.wake();
        this.live--;
        if (!this.closing) {
          o.log.error({ worker: index, code }, 'dns worker exited');
          if (this.live === 0) o.onNoneLeft?.();
        }
        reject(new Error(`dns worker ${index} exited (${code})`));
      });
    });
  }

  private post(w: Worker, m: ToWorker): void {
    try { w.postMessage(m); } catch (err) { this.o.log.error({ err }, 'dns worker message failed'); }
  }

  private broadcast(m: ToWorker): void {
    for (const w of this.workers) this.post(w, m);
  }

  /** Posts a change of the index image to every worker; returns its number. */
  image(image: IndexImage): number {
    this.gen++;
    this.broadcast({ t: 'image', gen: this.gen, image });
    return this.gen;
  }

  private stages = 0;

  /**
   * Sends a large apply's image ahead of its commit (docs/dns.md "Workers"): the workers keep it
   * aside; `commit` (once the main thread committed the plan) numbers it like `image` and lets them
   * take it. A stage never committed is dropped by the next stage or image. Returns its stage number.
   */
  stage(image: IndexImage): number {
    this.broadcast({ t: 'stage', stage: ++this.stages, image });
    return this.stages;
  }

  /** Lets every worker take a staged image; returns its number (acknowledged as an `image`'s). */
  commit(stage: number): number {
    this.gen++;
    this.broadcast({ t: 'commit', stage, gen: this.gen });
    return this.gen;
  }

  /** Tells every worker that the health board moved to new buffers (HealthBoardWriter.onNewBoard). */
  board(board: HealthBoardBuffers): void { this.broadcast({ t: 'board', board }); }

  /** Posts the provenance of a newly applied revision (the CHAOS version answer) to every worker. */
  version(version: Buffer): void { this.broadcast({ t: 'version', version }); }

  /** Adds RUM samples to every worker's store. */
  rum(samples: RumSample[]): void { this.broadcast({ t: 'rum', samples }); }

  /**
   * Resolves when every worker serves the newest apply; undefined when they already do. Gives up
   * after `settleTimeoutMs` (default 2 s) with a warning, so a stuck worker cannot hold the API.
   */
  settled(): Promise<void> | undefined {
    const gen = this.gen;
    if (this.acked.every((a) => a >= gen)) return undefined;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.o.log.warn({ gen, acked: this.acked }, 'dns workers did not confirm an apply in time');
        resolve();
      }, this.o.settleTimeoutMs ?? 2000);
      timer.unref();
      this.waiters.push({ gen, resolve: () => { clearTimeout(timer); resolve(); } });
    });
  }

  private wake(): void {
    const min = Math.min(...this.acked);
    const left: typeof this.waiters = [];
    for (const w of this.waiters) if (w.gen <= min) w.resolve(); else left.push(w);
    this.waiters = left;
  }

  /** Number of worker threads still running. */
  get running(): number { return this.workers.filter((w) => w.threadId >= 0).length; }

  /** Stops every worker and waits until each thread has exited. Idempotent. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((w) => new Promise<void>((resolve) => {
      if (w.threadId < 0) { resolve(); return; }
      const timer = setTimeout(() => { void w.terminate(); }, 2000);
      w.once('exit', () => { clearTimeout(timer); resolve(); });
      this.post(w, { t: 'stop' });
    })));
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }
}
