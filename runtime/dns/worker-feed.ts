import { performance } from 'node:perf_hooks';
import type { ApplyHooks } from '../../core/apply/hooks.js';
import type { SnapshotHolder } from '../../core/apply/apply.js';
import type { Config } from '../config/types.js';
import type { HealthView } from '../ports/health-view.js';
import type { Logger } from '../log/logger.js';
import { runSliced, type Slicer } from '../../core/apply/slicer.js';
import type { Answerer } from './answer.js';
import type { DnsMetrics } from './metrics.js';
import type { DnsServer } from './server.js';
import { DnsWorkers } from './workers.js';
import { healthDelta, healthTable } from './health-rows.js';
import type { RumSample } from './worker-protocol.js';
import { HealthBoardWriter } from './health-board.js';
import type { ZoneIndex } from './zone-index.js';
import type { IndexImageWriter, SealedImage } from './index-image.js';

/** What the worker feed reads of the daemon context (runtime/app.ts `Core`). */
export interface FeedCore {
  config: Config;
  log: Logger;
  health: HealthView;
  holder: SnapshotHolder;
  applyHooks: ApplyHooks;
  closers: (() => Promise<void> | void)[];
}

/**
 * Keeps the DNS workers current (docs/dns.md "Workers"): each index the main thread installs is
 * written to the index image and its changed shards told to the workers (`publish`; a large
 * apply's ahead of its commit, `stageImage`); RUM samples are coalesced to one message per
 * event-loop turn. Health verdicts are written to the shared health board once
 * per turn: those of the endpoints that changed, or the whole table after an apply (its set of
 * served endpoints changed) or a change that may touch any endpoint (cluster liveness).
 *
 * It subscribes, at construction, to the health view's changes and to every apply's swap (the
 * provenance the CHAOS version query answers); the DNS part tells it each index it installs.
 */
export class WorkerFeed {
  /** the running worker threads (startWorkers); undefined before, without, and after them */
  workers: DnsWorkers | undefined = undefined;
  /** the health verdicts the workers read (written by the main thread; there while workers run) */
  board: HealthBoardWriter | undefined = undefined;
  private healthDue = false;
  /** an apply changed the served endpoints: the next copy is the whole table */
  private tableDue = false;
  /** earliest time (performance.now) of the next whole-table copy: copies of a large table are spaced out */
  private nextCopy = 0;
  /** the image of a large apply sent ahead to the workers, and its stage number */
  private staged: { sealed: SealedImage; stage: number } | undefined = undefined;
  /** RUM samples of this turn, sent to the workers at its end */
  private samples: RumSample[] = [];

  constructor(private readonly core: FeedCore, private readonly answerer: Answerer, readonly images: IndexImageWriter) {
    core.health.trackChanges();
    core.closers.push(core.health.subscribe(() => { this.scheduleHealth(); }));
    core.closers.push(core.applyHooks.add({
      // every applied revision changes the provenance the CHAOS version query answers
      afterSwap: () => { this.workers?.version(core.holder.provenance.rdata); },
    }));
  }

  /** Tells the workers the image of an index the main thread installed (nothing without workers, or when it serves the same). */
  publish(ix: ZoneIndex): void {
    if (this.wanted(ix)) this.post(this.images.image(ix));
  }

  /** `publish` in slices (a large index). */
  async publishSliced(ix: ZoneIndex, slicer: Slicer): Promise<void> {
    if (!this.wanted(ix)) return;
    const sealed = await runSliced(this.images.imageSteps(ix), slicer);
    // another index was installed, or another image committed, meanwhile: the current index is
    // written at once instead (never an older one over a newer)
    const current = this.answerer.index();
    if (current !== ix || !this.images.fits(sealed)) { this.publish(current); return; }
    this.post(sealed);
  }

  /**
   * Sends a large apply's image ahead (made in slices before its commit); the function returned is
   * called at the swap and lets the workers take it. Undefined when there is nothing to send.
   */
  async stageImage(ix: ZoneIndex, slicer: Slicer): Promise<(() => void) | undefined> {
    const w = this.workers;
    if (!w || !this.wanted(ix)) return undefined;
    const sealed = await runSliced(this.images.imageSteps(ix), slicer);
    const mine = { sealed, stage: w.stage(sealed.image) };
    this.staged = mine;
    return () => {
      // committed in the swap's turn: the workers take the image they already hold
      if (this.staged !== mine || !this.images.fits(mine.sealed) || this.workers !== w) { this.publish(ix); return; }
      this.post(mine.sealed, () => { w.commit(mine.stage); });
    };
  }

  /** An index built in slices was installed: the health board gets the verdicts of its endpoints. */
  indexInstalled(): void {
    this.scheduleTable();
  }

  /** A RUM sample to copy to the workers (the RUM source's onSample). */
  rum(key: string, ip: string, ms: number, at: number): void {
    if (!this.workers) return;
    if (this.samples.length === 0) setImmediate(this.flushRum);
    this.samples.push([key, ip, ms, at]);
  }

  private readonly flushRum = (): void => {
    const b = this.samples;
    this.samples = [];
    this.workers?.rum(b);
  };

  /** true when there are workers and `ix` serves something other than the committed image */
  private wanted(ix: ZoneIndex): boolean {
    return this.workers !== undefined && !this.images.unchanged(ix);
  }

  /** Tells the workers an image the main thread's index moved to. */
  private post(sealed: SealedImage, tell?: () => void): void {
    this.images.commit(sealed);
    this.staged = undefined;
    if (tell) tell();
    else this.workers?.image(sealed.image);
    this.scheduleTable();
  }

  private scheduleHealth(): void {
    if (this.healthDue || !this.board) return;
    this.healthDue = true;
    setImmediate(this.flushHealth);
  }

  private scheduleTable(): void {
    this.tableDue = true;
    this.scheduleHealth();
  }

  private readonly flushHealth = (): void => {
    const w = this.board;
    const health = this.core.health;
    if (!w) { this.healthDue = false; return; }
    const wait = this.nextCopy - performance.now();
    const changes = health.takeChanges();
    if (!changes.all && !this.tableDue) {
      this.healthDue = false;
      const { rows, cleared } = healthDelta(changes.endpoints, health);
      if (rows.length > 0 || cleared.length > 0) w.update(rows, cleared);
      return;
    }
    if (wait > 0) {
      // a whole-table copy is not due yet: what changed meanwhile goes into it
      this.tableDue = true;
      setTimeout(this.flushHealth, wait);
      return;
    }
    this.healthDue = false;
    this.tableDue = false;
    const t0 = performance.now();
    w.replace(healthTable(this.answerer.index(), health));
    // The table is O(endpoints): with tens of thousands of members and cluster liveness flapping,
    // a whole write every turn would take the whole thread. At most a tenth of it goes to copies: after a
    // copy that took t ms, the next waits 9·t ms (nothing for small tables).
    const took = performance.now() - t0;
    this.nextCopy = took >= 1 ? performance.now() + 9 * took : 0;
  };
}

/**
 * Starts dns.workers worker threads joining the UDP socket's SO_REUSEPORT group, with the current
 * DNS rows and serial, and the health board written with the current verdicts; once every worker
 * has joined, the main thread's UDP socket leaves the group, so the main thread answers no UDP
 * query while workers run (DESIGN decision 16; TCP stays). Should every worker exit, the main thread
 * opens its UDP socket again. Without the batched path (no SO_REUSEPORT in dgram on Node 20) the
 * main thread answers alone, and says so. A worker that cannot start fails the start.
 */
export async function startWorkers(core: FeedCore, feed: WorkerFeed, a: Answerer, metrics: DnsMetrics, sequence: SharedArrayBuffer, server: DnsServer): Promise<void> {
  const cfg = core.config;
  const log = core.log.child({ component: 'dns' });
  if (server.udpPath !== 'batched') {
    log.warn({ workers: cfg.dns.workers }, 'dns.workers needs the batched UDP path; the main thread answers alone');
    return;
  }
  const images = feed.images;
  images.commit(images.image(a.index()));
  const board = new HealthBoardWriter();
  board.replace(healthTable(a.index(), core.health));
  board.onFull = () => log.error({ endpoints: board.size }, 'dns workers: the health board is full; endpoints past it answer as healthy in the workers');
  const { workers, ready } = DnsWorkers.start({
    count: cfg.dns.workers, log, metrics, current: () => images.full(),
    init: { config: cfg, sequence, port: server.port, version: core.holder.provenance.rdata, board: board.buffers, image: images.full() },
    onResync: () => { metrics.resyncs++; },
    onNoneLeft: () => {
      log.error({}, 'no dns worker left; the main thread answers UDP again');
      server.rejoinUdp().catch((err: unknown) => { log.error({ err }, 'the main thread could not answer UDP again'); });
    },
    answer: async (req, src) => {
      const t0 = performance.now();
      const r = a.handle(req, src, true, false);
      // an UPDATE is answered once it is done (a PendingAnswer with `finish`; without, it never waits here)
      const pending = r !== null && !Buffer.isBuffer(r) ? r : undefined;
      if (pending) await pending.wait;
      const out = pending ? pending.finish?.() ?? null : r as Buffer | null;
      metrics.record(a.lastQtype, a.lastRcode, (performance.now() - t0) / 1000);
      return out;
    },
  });
  board.onNewBoard = (b) => workers.board(b);
  feed.workers = workers;
  feed.board = board;
  try {
    await ready;
  } catch (err) {
    feed.workers = undefined;
    feed.board = undefined;
    await workers.close();
    await server.close();
    throw err;
  }
  // the workers answer every UDP query from now on: the main thread leaves the group
  await server.leaveUdp();
  log.info({ workers: cfg.dns.workers, port: server.port }, 'dns workers answering');
}

