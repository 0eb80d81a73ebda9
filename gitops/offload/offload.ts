import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../../runtime/worker-thread.js';
import type { Logger } from '../../runtime/log/logger.js';
import type { Row } from '../../core/model/types.js';
import type { RoutingCase } from '../routing/kind.js';
import type { Change, Plan } from '../../core/plan/types.js';
import { decodeChanges, type WireChunk } from './plan-wire.js';
import { nextTurn } from '../../core/apply/slicer.js';
import type { DryRunRequest, FromOffload, OffloadFailure, OffloadInit, PlanRequest, PlanSummary, ToOffload } from './protocol.js';

declare module '../../runtime/ports/parts.js' {
  interface Ports {
    /**
     * A passive WAL checkpoint on the offload worker's connection, run after a large apply's
     * commit instead of the main connection's automatic one (core/apply/apply-sliced.ts).
     */
    walCheckpoint?: () => Promise<void>;
  }
}

/** changes per chunk pulled from the worker: about 1 MB of JSON, under 10 ms to decode */
const CHUNK = 2000;

/** A failed offload request, with how the reconciler should classify it. */
export class OffloadError extends Error {
  constructor(readonly reason: OffloadFailure, message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A daemon profiled with --cpu-prof profiles this thread too (the other flags are the main thread's). */
function profileFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--cpu-prof')) continue;
    // `--cpu-prof-dir DIR` as one `--cpu-prof-dir=DIR`: a worker's execArgv keeps flags whole
    if (a !== '--cpu-prof' && !a.includes('=') && i + 1 < argv.length) out.push(`${a}=${argv[++i]!}`);
    else out.push(a);
  }
  return out;
}
const PROFILE_FLAGS = profileFlags(process.execArgv);
const newWorker = (init: OffloadInit): Worker => startWorkerThread(import.meta.url, './worker-main', { workerData: init, name: 'gslbd-offload', execArgv: PROFILE_FLAGS });

interface Deferred<T> { promise: Promise<T>; resolve: (v: T) => void; reject: (e: Error) => void }
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
  // a phase nobody awaits (the request failed earlier) must not be an unhandled rejection
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * One commit being loaded, validated and planned by the offload worker. Its three phases resolve
 * in order as the worker reports them (`loaded`, `validated` with problems or the routing cases,
 * `planned` with the summary); a failure rejects the phase it happened in and every later one
 * with an OffloadError. `changes` then pulls the plan's changes.
 */
export class PlanJob {
  readonly loaded = deferred<{ problems?: string[] }>();
  readonly validated = deferred<{ problems?: string[]; cases?: RoutingCase[] }>();
  readonly planned = deferred<PlanSummary>();
  /** the plan id, which the worker hashes once the changes were pulled (or the plan released) */
  readonly planId = deferred<string>();
  /** a dry run's outcome (OffloadWorker.dryRun) */
  readonly dry = deferred<{ body: string; planned: boolean; cases: RoutingCase[]; summary?: PlanSummary }>();
  private readonly chunkWaits = new Map<number, Deferred<WireChunk>>();
  /** a dry run's plan: it never gets an id */
  private dryRun = false;

  constructor(readonly id: number, private readonly owner: OffloadWorker) {}

  /** @internal a message of this job from the worker */
  receive(m: FromOffload): void {
    switch (m.t) {
      case 'loaded':
        this.loaded.resolve(m);
        if (m.problems) this.end();
        break;
      case 'validated':
        this.validated.resolve(m);
        if (m.problems) this.end();
        break;
      case 'planned': this.planned.resolve(m.summary); break;
      case 'planId': this.planId.resolve(m.planId); break;
      case 'dry-run':
        this.dryRun = true;
        this.dry.resolve(m);
        if (!m.summary) this.owner.forget(this.id);
        break;
      case 'failed': this.fail(new OffloadError(m.reason, m.message)); break;
      case 'chunk': this.chunkWaits.get(m.from)?.resolve(m.chunk); break;
      case 'checkpointed': break;
    }
  }

  /** @internal rejects whatever is still pending */
  fail(err: Error): void {
    for (const d of [this.loaded, this.validated, this.planned, this.planId, this.dry, ...this.chunkWaits.values()]) d.reject(err);
    this.owner.forget(this.id);
  }

  private end(): void {
    const err = new OffloadError('Internal', 'the request ended with problems');
    this.validated.reject(err);
    this.planned.reject(err);
    this.planId.reject(err);
    this.owner.forget(this.id);
  }

  /**
   * The plan's changes, pulled in chunks of CHUNK (one message each way per chunk, so the main
   * thread decodes one chunk per turn of its event loop; the next chunk is asked for before this
   * one is decoded, so the worker encodes while the main thread decodes); `before` of updates and
   * deletes comes from `rowOf`; `rowJson[i]` is the JSON text of `changes[i].after` as the worker
   * made it (plan-wire.ts). Resolves with undefined when a row is missing there (the state moved on).
   */
  async changes(summary: PlanSummary, rowOf: (kind: string, id: string) => Row | undefined): Promise<{ changes: Change[]; rowJson: (string | undefined)[] } | undefined> {
    const out: Change[] = [];
    const rowJson: (string | undefined)[] = [];
    const ask = (from: number) => {
      if (from >= summary.total) return;
      this.chunkWaits.set(from, deferred<WireChunk>());
      this.owner.post({ t: 'chunk', id: this.id, from, count: CHUNK });
    };
    ask(0);
    try {
      for (let from = 0; from < summary.total; from += CHUNK) {
        ask(from + CHUNK);
        const chunk = await this.chunkWaits.get(from)!.promise;
        this.chunkWaits.delete(from);
        // chunks that arrived together are delivered in one turn: decode each in a turn of its own
        await nextTurn();
        const part = decodeChanges(chunk, rowOf);
        if (!part) return undefined;
        for (const c of part.changes) out.push(c);
        for (const j of part.rowJson) rowJson.push(j);
      }
      return { changes: out, rowJson };
    } finally {
      this.chunkWaits.clear();
    }
  }

  /**
   * Tells the worker the plan's changes are no longer needed. The job still hears of its plan id
   * (the worker hashes on, and the apply may be waiting for it): it is forgotten once the id
   * arrived or failed.
   */
  release(): void {
    this.owner.post({ t: 'release', id: this.id });
    if (this.dryRun) return this.owner.forget(this.id);
    const forget = () => { this.owner.forget(this.id); };
    this.planId.promise.then(forget, forget);
  }
}

/**
 * The main thread's side of the offload worker (docs/gitops.md "Off the DNS thread"): started on
 * first use and again after it exits (its caches are rebuilt then). `plan` starts a PlanJob;
 * `checkpoint` runs a passive WAL checkpoint on the worker's connection; `close` ends the thread.
 */
export class OffloadWorker {
  private worker: Worker | undefined;
  private seq = 0;
  private readonly jobs = new Map<number, PlanJob>();
  private readonly checkpoints = new Map<number, Deferred<void>>();
  private closed = false;

  constructor(private readonly init: OffloadInit, private readonly log: Logger) {}

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const w = newWorker(this.init);
    w.unref();
    w.on('message', (m: FromOffload) => {
      if (m.t === 'checkpointed') {
        const d = this.checkpoints.get(m.id);
        this.checkpoints.delete(m.id);
        if (m.error) this.log.warn({ error: m.error }, 'wal checkpoint failed');
        d?.resolve();
        return;
      }
      this.jobs.get(m.id)?.receive(m);
    });
    const gone = (err: Error) => {
      if (this.worker !== w) return;
      this.worker = undefined;
      for (const j of [...this.jobs.values()]) j.fail(err);
      for (const d of this.checkpoints.values()) d.resolve();
      this.checkpoints.clear();
    };
    w.on('error', (err) => {
      this.log.error({ err }, 'offload worker failed');
      gone(new OffloadError('Internal', `the offload worker failed: ${err.message}`));
    });
    w.on('exit', (code) => { gone(new OffloadError('Internal', `the offload worker exited (${code})`)); });
    this.worker = w;
    return w;
  }

  /** @internal */
  post(m: ToOffload): void {
    this.worker?.postMessage(m);
  }

  /** @internal */
  forget(id: number): void {
    this.jobs.delete(id);
  }

  /** Starts loading, validating and planning one commit. Errors: throws when closed. */
  plan(req: PlanRequest): PlanJob {
    return this.start((id) => ({ t: 'plan', id, ...req }));
  }

  /**
   * Plans files against the database's state without applying anything, and renders the result
   * (POST /gitops/plan). The job's `dry` resolves with the response body; with a `summary`, pull
   * the changes (`changes`) or `release` it.
   */
  dryRun(req: DryRunRequest): PlanJob {
    return this.start((id) => ({ t: 'dry-run', id, ...req }));
  }

  private start(message: (id: number) => ToOffload): PlanJob {
    if (this.closed) throw new OffloadError('Internal', 'the offload worker is closed');
    const w = this.ensure();
    const job = new PlanJob(++this.seq, this);
    this.jobs.set(job.id, job);
    w.postMessage(message(job.id));
    return job;
  }

  /** Runs a passive WAL checkpoint in the worker; resolves when done (also when it failed: logged). */
  checkpoint(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const w = this.ensure();
    const d = deferred<void>();
    const id = ++this.seq;
    this.checkpoints.set(id, d);
    w.postMessage({ t: 'checkpoint', id } satisfies ToOffload);
    return d.promise;
  }

  /** Ends the worker thread (pending requests fail). */
  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    if (w) await w.terminate();
  }
}

/**
 * Builds the Plan from a summary and its changes, computed against `baseVersion` of the main
 * thread's snapshot, with its id when known (else it is set when the worker has hashed it).
 */
export function planOf(summary: PlanSummary, changes: Change[], baseVersion: number, id?: string): Plan {
  return { revision: summary.revision, origin: summary.origin, baseVersion, changes, counts: summary.counts, safety: summary.safety, ...(id === undefined ? {} : { id }) };
}
