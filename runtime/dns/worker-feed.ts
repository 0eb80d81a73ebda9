import type { AsnResponse, CityResponse } from 'maxmind';
import { performance } from 'node:perf_hooks';
import type { Core } from '../app.js';
import type { MmdbSource } from '../geo/mmdb-source.js';
import { runSliced, type Slicer } from '../../core/apply/slicer.js';
import type { Answerer } from './answer.js';
import type { DnsMetrics } from './metrics.js';
import type { DnsServer } from './server.js';
import type { TransferHandler } from './tcp-dispatch.js';
import { DnsWorkers } from './workers.js';
import { healthDelta, healthTable } from './health-rows.js';
import type { RumSample } from './worker-protocol.js';
import { HealthBoardWriter } from './health-board.js';
import type { ZoneIndex } from './zone-index.js';
import type { IndexImageWriter, SealedImage } from './index-image.js';
import type { ZoneSerial } from './zone-serial.js';

/** What the DNS part keeps per core (runtime/dns/part.ts), and what feeds its worker threads. */
export interface DnsState {
  answerer: Answerer; metrics: DnsMetrics; sources: MmdbSource<CityResponse | AsnResponse>[]; transfer: TransferHandler | undefined;
  serial: ZoneSerial; workers: DnsWorkers | undefined;
  /** the health verdicts the workers read (written by the main thread; there while workers run) */
  board?: HealthBoardWriter | undefined;
  /** the Uint32 cell of the shared round-robin counter */
  sequence: SharedArrayBuffer;
  /** the main thread's index being built in slices after a one-turn apply of a large state (part.ts) */
  indexBuild?: Promise<void> | undefined;
  /** told when such a build is installed (the health board then gets the verdicts of its endpoints) */
  onIndexInstalled?: () => void;
  /** RUM samples to copy to the workers (set as the RUM source's onSample) */
  rumFeed?: (key: string, ip: string, ms: number, at: number) => void;
  /** the index image the workers read (index-image.ts) */
  images: IndexImageWriter;
  /** tells the workers the image of an index the main thread installed (set by feedWorkers) */
  publish?: (ix: ZoneIndex) => void;
  /** `publish` in slices (a large index) */
  publishSliced?: (ix: ZoneIndex, slicer: Slicer) => Promise<void>;
  /**
   * Sends a large apply's image ahead (made in slices before its commit); the function returned is
   * called at the swap and lets the workers take it. Undefined when there is nothing to send.
   */
  stageImage?: (ix: ZoneIndex, slicer: Slicer) => Promise<(() => void) | undefined>;
}

/**
 * Keeps the DNS workers current (docs/dns.md "Workers"): each index the main thread installs is
 * written to the index image and its changed shards told to the workers (`publish`; a large
 * apply's ahead of its commit, `stageImage`); RUM samples are coalesced to one message per
 * event-loop turn. Health verdicts are written to the shared health board once
 * per turn: those of the endpoints that changed, or the whole table after an apply (its set of
 * served endpoints changed) or a change that may touch any endpoint (cluster liveness).
 */
export function feedWorkers(core: Core, state: DnsState): void {
  let healthDue = false;
  /** an apply changed the served endpoints: the next copy is the whole table */
  let tableDue = false;
  /** earliest time (performance.now) of the next whole-table copy: copies of a large table are spaced out */
  let nextCopy = 0;
  core.health.trackChanges();
  const flushHealth = () => {
    const w = state.board;
    if (!w) { healthDue = false; return; }
    const wait = nextCopy - performance.now();
    const changes = core.health.takeChanges();
    if (!changes.all && !tableDue) {
      healthDue = false;
      const { rows, cleared } = healthDelta(changes.endpoints, core.health);
      if (rows.length > 0 || cleared.length > 0) w.update(rows, cleared);
      return;
    }
    if (wait > 0) {
      // a whole-table copy is not due yet: what changed meanwhile goes into it
      tableDue = true;
      setTimeout(flushHealth, wait);
      return;
    }
    healthDue = false;
    tableDue = false;
    const t0 = performance.now();
    w.replace(healthTable(state.answerer.index(), core.health));
    // The table is O(endpoints): with tens of thousands of members and cluster liveness flapping,
    // a whole write every turn would take the whole thread. At most a tenth of it goes to copies: after a
    // copy that took t ms, the next waits 9·t ms (nothing for small tables).
    const took = performance.now() - t0;
    nextCopy = took >= 1 ? performance.now() + 9 * took : 0;
  };
  const scheduleHealth = () => {
    if (healthDue || !state.board) return;
    healthDue = true;
    setImmediate(flushHealth);
  };
  const scheduleTable = () => {
    tableDue = true;
    scheduleHealth();
  };
  core.health.onChange = scheduleHealth;
  state.onIndexInstalled = () => scheduleTable();
  core.closers.push(() => { core.health.onChange = undefined; });
  const images = state.images;
  /** the image of a large apply sent ahead to the workers, and its stage number */
  let staged: { sealed: SealedImage; stage: number } | undefined;
  /** Tells the workers an image the main thread's index moved to (nothing when DNS serves the same as before). */
  const post = (sealed: SealedImage, tell: () => void = () => { state.workers?.image(sealed.image); }) => {
    images.commit(sealed);
    staged = undefined;
    tell();
    scheduleTable();
  };
  /** true when there are workers and `ix` serves something other than the committed image */
  const wanted = (ix: ZoneIndex) => state.workers !== undefined && !images.unchanged(ix);
  const publish = (ix: ZoneIndex) => { if (wanted(ix)) post(images.image(ix)); };
  state.publish = publish;
  state.publishSliced = async (ix, slicer) => {
    if (!wanted(ix)) return;
    const sealed = await runSliced(images.imageSteps(ix), slicer);
    // another index was installed, or another image committed, meanwhile: the current index is
    // written at once instead (never an older one over a newer)
    const current = state.answerer.index();
    if (current !== ix || !images.fits(sealed)) { publish(current); return; }
    post(sealed);
  };
  state.stageImage = async (ix, slicer) => {
    const w = state.workers;
    if (!w || !wanted(ix)) return undefined;
    const sealed = await runSliced(images.imageSteps(ix), slicer);
    staged = { sealed, stage: w.stage(sealed.image) };
    const mine = staged;
    return () => {
      // committed in the swap's turn: the workers take the image they already hold
      if (staged !== mine || !images.fits(mine.sealed) || state.workers !== w) { publish(ix); return; }
      post(mine.sealed, () => { w.commit(mine.stage); });
    };
  };
  core.closers.push(core.applyHooks.add({
    // every applied revision changes the provenance the CHAOS version query answers
    afterSwap: () => { state.workers?.version(core.holder.provenance.rdata); },
  }));
  let samples: RumSample[] = [];
  const flushRum = () => { const b = samples; samples = []; state.workers?.rum(b); };
  state.rumFeed = (key, ip, ms, at) => {
    if (!state.workers) return;
    if (samples.length === 0) setImmediate(flushRum);
    samples.push([key, ip, ms, at]);
  };
  // the API's wait for a write: the index built in slices (after a one-turn apply of a large
  // state) and its image taken by every worker
  core.ports.applySettled = () => {
    const ix = state.indexBuild;
    return ix ? ix.then(() => state.workers?.settled()) : state.workers?.settled();
  };
  core.ports.dnsWorkerQueries = () => state.metrics.perWorker();
  core.ports.dnsAnswerTotals = () => state.metrics.answerTotals();
  core.ports.dnsWorkersRunning = () => state.workers?.running ?? 0;
}
/**
 * Starts dns.workers worker threads joining the UDP socket's SO_REUSEPORT group, with the current
 * DNS rows and serial, and the health board written with the current verdicts; once every worker
 * has joined, the main thread's UDP socket leaves the group, so the main thread answers no UDP
 * query while workers run (DESIGN decision 16; TCP stays). Should every worker exit, the main thread
 * opens its UDP socket again. Without the batched path (no SO_REUSEPORT in dgram on Node 20) the
 * main thread answers alone, and says so. A worker that cannot start fails the start.
 */
export async function startWorkers(core: Core, state: DnsState, server: DnsServer): Promise<void> {
  const cfg = core.config;
  const log = core.log.child({ component: 'dns' });
  if (server.udpPath !== 'batched') {
    log.warn({ workers: cfg.dns.workers }, 'dns.workers needs the batched UDP path; the main thread answers alone');
    return;
  }
  const { answerer: a, metrics, images } = state;
  images.commit(images.image(a.index()));
  const board = new HealthBoardWriter();
  board.replace(healthTable(a.index(), core.health));
  board.onFull = () => log.error({ endpoints: board.size }, 'dns workers: the health board is full; endpoints past it answer as healthy in the workers');
  const { workers, ready } = DnsWorkers.start({
    count: cfg.dns.workers, log, metrics, current: () => images.full(),
    init: { config: cfg, sequence: state.sequence, port: server.port, version: core.holder.provenance.rdata, board: board.buffers, image: images.full() },
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
  state.workers = workers;
  state.board = board;
  try {
    await ready;
  } catch (err) {
    state.workers = undefined;
    state.board = undefined;
    await workers.close();
    await server.close();
    throw err;
  }
  // the workers answer every UDP query from now on: the main thread leaves the group
  await server.leaveUdp();
  log.info({ workers: cfg.dns.workers, port: server.port }, 'dns workers answering');
}

