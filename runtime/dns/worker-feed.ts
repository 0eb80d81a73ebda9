import type { AsnResponse, CityResponse } from 'maxmind';
import { performance } from 'node:perf_hooks';
import type { Core } from '../app.js';
import type { MmdbSource } from '../geo/mmdb-source.js';
import type { Row } from '../model/types.js';
import { rowsOf, type RowMutation, type Snapshot } from '../snapshot/snapshot.js';
import { changeMutation, planMutations } from '../../controller/apply/apply.js';
import type { Plan } from '../../controller/plan/types.js';
import type { Answerer } from './answer.js';
import type { DnsMetrics } from './metrics.js';
import type { DnsServer } from './server.js';
import type { TransferHandler } from './tcp-dispatch.js';
import { DnsWorkers } from './workers.js';
import { healthDelta, healthTable, type RumSample } from './worker-protocol.js';
import { HealthBoardWriter } from './health-board.js';
import { DNS_TABLES } from './zone-index.js';
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
}

/** DNS mutations per message of a staged apply (about 1 MB to clone) */
const STAGE_PART = 2000;
const isDnsKind = (kind: string) => (DNS_TABLES as readonly string[]).includes(kind);
const dnsMutations = (muts: RowMutation[]) => muts.filter((m) => isDnsKind(m.op === 'put' ? m.row.kind : m.kind));
/** The rows DNS answers from (the DNS_TABLES), for a worker's first snapshot. */
export const dnsRows = (s: Snapshot): Row[] => DNS_TABLES.flatMap((k) => [...rowsOf(s, k).values()]);

/**
 * Keeps the DNS workers current (docs/dns.md "Workers"): every apply that changes a DNS row is
 * posted at once (after the serial hook, so it carries the new serial); RUM samples are coalesced
 * to one message per event-loop turn. Health verdicts are written to the shared health board once
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
  /** the large apply staged on the workers by `prepare`, committed at its swap */
  let staged: { plan: Plan; stage: number } | undefined;
  core.closers.push(core.applyHooks.add({
    // A large apply (controller/apply/apply-sliced.ts) posts its DNS mutations in parts before its
    // transaction, one per slice; the workers build the next snapshot and zone index in slices of
    // their own and swap at the commit, so neither thread stops answering for the whole plan.
    // With the rows' JSON texts at hand (a plan from the offload worker), a part goes as JSON text.
    prepare: async (plan, next, _prev, slicer, opts) => {
      staged = undefined;
      const w = state.workers;
      if (!w) return;
      const stage = w.beginStage();
      const texts = opts.rowJson;
      let part: RowMutation[] = [];
      let json: string[] = [];
      let any = false;
      const changes = plan.changes;
      for (let i = 0; i < changes.length; i++) {
        const c = changes[i]!;
        if (!isDnsKind(c.kind)) continue;
        const text = texts?.[i];
        if (text !== undefined) json.push(`{"op":"put","row":${text}}`);
        else if (texts) json.push(JSON.stringify(changeMutation(c)));
        else part.push(changeMutation(c));
        if (part.length + json.length < STAGE_PART) continue;
        w.stagePart(stage, texts ? `[${json.join(',')}]` : part);
        any = true;
        part = [];
        json = [];
        await slicer.maybePause();
      }
      if (part.length + json.length > 0) { w.stagePart(stage, texts ? `[${json.join(',')}]` : part); any = true; }
      if (!any) return;
      w.stageEnd(stage, next.revision, state.serial.after(plan));
      staged = { plan, stage };
    },
    afterSwap: (plan, next) => {
      const w = state.workers;
      if (!w) return;
      // every applied revision changes the provenance the CHAOS version query answers
      w.version(core.holder.provenance.rdata);
      if (staged?.plan === plan) {
        w.commit(staged.stage);
        staged = undefined;
        scheduleTable();
        return;
      }
      const muts = dnsMutations(planMutations(plan));
      if (muts.length === 0) return;
      w.apply(muts, next.revision, state.serial.current);
      scheduleTable();
    },
  }));
  let samples: RumSample[] = [];
  const flushRum = () => { const b = samples; samples = []; state.workers?.rum(b); };
  state.rumFeed = (key, ip, ms, at) => {
    if (!state.workers) return;
    if (samples.length === 0) setImmediate(flushRum);
    samples.push([key, ip, ms, at]);
  };
  core.ports.applySettled = () => {
    const w = state.workers?.settled();
    const ix = state.indexBuild;
    return w || ix ? Promise.all([w, ix]).then(() => undefined) : undefined;
  };
  core.ports.dnsWorkerQueries = () => state.metrics.perWorker();
  core.ports.dnsAnswerTotals = () => state.metrics.answerTotals();
  core.ports.dnsWorkersRunning = () => state.workers?.running ?? 0;
}
/**
 * Starts dns.workers - 1 worker threads joining the UDP socket's SO_REUSEPORT group, with the
 * current DNS rows and serial, and the health board written with the current verdicts. Without the batched path (no SO_REUSEPORT in dgram on
 * Node 20) the main thread answers alone, and says so. A worker that cannot start fails the start.
 */
export async function startWorkers(core: Core, state: DnsState, server: DnsServer): Promise<void> {
  const cfg = core.config;
  const log = core.log.child({ component: 'dns' });
  if (server.udpPath !== 'batched') {
    log.warn({ workers: cfg.dns.workers }, 'dns.workers needs the batched UDP path; the main thread answers alone');
    return;
  }
  const { answerer: a, metrics } = state;
  /** what a worker answers from, as the main thread serves it now (at start, and for a resync) */
  const current = () => {
    const snap = core.holder.current;
    return { rows: dnsRows(snap), revision: snap.revision, serial: state.serial.current };
  };
  const board = new HealthBoardWriter();
  board.replace(healthTable(a.index(), core.health));
  board.onFull = () => log.error({ endpoints: board.size }, 'dns workers: the health board is full; endpoints past it answer as healthy in the workers');
  const { workers, ready } = DnsWorkers.start({
    count: cfg.dns.workers - 1, log, metrics, current,
    init: { config: cfg, sequence: state.sequence, port: server.port, version: core.holder.provenance.rdata, board: board.buffers, ...current() },
    onResync: () => { metrics.resyncs++; },
    answer: (req, src) => {
      const t0 = performance.now();
      const r = a.handle(req, src, true, false) as Buffer | null;
      metrics.record(a.lastQtype, a.lastRcode, (performance.now() - t0) / 1000);
      return r;
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
  log.info({ workers: cfg.dns.workers, port: server.port }, 'dns workers answering');
}

