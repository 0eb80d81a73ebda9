import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { AsnResponse, CityResponse } from 'maxmind';
import { parseDuration, parseMicros } from '../config/duration.js';
import { MmdbSource } from '../geo/mmdb-source.js';
import type { Logger } from '../log/logger.js';
import type { Row } from '../model/types.js';
import { RumStore } from '../rum/store.js';
import { SnapshotBuilder, emptySnapshot, nextSnapshot, type RowMutation, type Snapshot } from '../snapshot/snapshot.js';
import { Slicer, runSliced } from '../slicer.js';
import { indexInSlices, type ZoneIndex } from './zone-index.js';
import { Answerer } from './answer.js';
import { createDispatch } from './dispatch.js';
import { DnsMetrics } from './metrics.js';
import { tsigKeyring } from './tsig.js';
import { createDnssec } from './dnssec-setup.js';
import { batchedUdp } from './udp-batched.js';
import { HealthBoardReader } from './health-board.js';
import type { FromWorker, LogLine, ToWorker, WorkerInit } from './worker-protocol.js';

/**
 * A DNS worker thread (docs/dns.md "Workers"): one batched UDP socket that joins the main thread's
 * SO_REUSEPORT group, answering from its own copies of the snapshot, zone index and RUM store,
 * which the main thread keeps current by message (worker-protocol.ts), and from the health board
 * the main thread writes in shared memory (health-board.ts). Counters go to
 * shared memory the main thread exports; log lines (the query log included) go to the main
 * thread's logger. RFC 2136 UPDATE packets are forwarded to the main thread, which owns the write
 * path. Ends when told to stop.
 */

const port = parentPort as MessagePort;
const init = workerData as WorkerInit;
const post = (m: FromWorker) => port.postMessage(m);

/** A logger that hands its lines to the main thread's, once per event-loop turn. */
function workerLogger(): Logger {
  let lines: LogLine[] = [];
  const flush = () => {
    const batch = lines;
    lines = [];
    try {
      post({ t: 'log', lines: batch });
    } catch {
      // a field that cannot be cloned (a function…): keep the message, drop the fields
      post({ t: 'log', lines: batch.map(([l, f, m]) => [l, { fields: String(f) }, m]) });
    }
  };
  const at = (level: LogLine[0]) => (fields: unknown, msg?: string) => {
    if (lines.length === 0) setImmediate(flush);
    if (typeof fields === 'string') lines.push([level, {}, fields]);
    else lines.push([level, (fields ?? {}) as Record<string, unknown>, msg ?? '']);
  };
  const log = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), trace: () => {}, fatal: at('error'), child: () => log };
  return log as unknown as Logger;
}

async function run(): Promise<void> {
  const cfg = init.config;
  const log = workerLogger();
  /** a snapshot of every row, built from nothing (at start, and after a resync) */
  const snapshotOf = (rows: Row[], revision: string) => nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row })), revision, Date.now());
  let snapshot = snapshotOf(init.rows, init.revision);
  let serial = init.serial;
  let version = Buffer.from(init.version);
  const health = new HealthBoardReader(init.board);
  const lb = cfg.loadbalancer;
  const city = lb.geoip.dbPath ? new MmdbSource<CityResponse>(lb.geoip.dbPath, log) : undefined;
  const asn = lb.asn.dbPath ? new MmdbSource<AsnResponse>(lb.asn.dbPath, log) : undefined;
  const sources = [city, asn].filter((s) => s !== undefined);
  const rum = new RumStore();
  const a = new Answerer({
    config: cfg, health, snapshot: () => snapshot, serial: () => serial,
    geo: { city, asn, endpointLocations: lb.geoip.endpointLocations },
    rum, rand: Math.random, tsigKeys: tsigKeyring(cfg.dns.axfr.tsigKeys),
    versionTxt: () => version,
    sequence: new Uint32Array(init.sequence),
    ...(cfg.dns.dnssec.enabled ? { dnssec: createDnssec(cfg.dns.dnssec, log) } : {}),
  });
  const metrics = new DnsMetrics(init.metrics);
  const d = createDispatch(a, { deadlineMs: parseDuration(cfg.dns.lookupDeadline) ?? 200, queryLog: cfg.dns.queryLog, log, metrics, maxQueryAgeMs: parseDuration(cfg.dns.maxQueryAge) ?? 1000 });
  const waiting = new Map<number, (b: Buffer) => void>();
  let nextId = 0;
  const udp = batchedUdp(d, cfg.dns.listenAddr, {
    reusePort: 'join',
    coalesceUs: parseMicros(cfg.dns.udpCoalesce) ?? 0,
    forward: cfg.dns.update.enabled
      ? (req, src, send) => {
        const id = nextId++;
        waiting.set(id, send);
        post({ t: 'forward', id, req, src });
        return true;
      }
      : undefined,
  });
  for (const s of sources) {
    s.onLoad = () => { a.index(); };
    await s.start();
  }
  a.index();
  const sweep = setInterval(() => rum.sweep(), 60_000);
  sweep.unref();
  // Changes of the served state go through one queue, in order: a staged large apply is built in
  // slices (the socket is answered between them), and an apply posted after it waits for its swap.
  let queue: Promise<void> = Promise.resolve();
  const enqueue = (fn: () => void | Promise<void>) => {
    queue = queue.then(fn).catch((err: unknown) => { log.error({ err }, 'dns worker update failed'); });
  };
  const slicer = new Slicer(10);
  let staged: { stage: number; builder: SnapshotBuilder; built?: { snapshot: Snapshot; serial: number; ix: ZoneIndex } } | undefined;
  port.on('message', (m: ToWorker) => {
    switch (m.t) {
      case 'stage':
        enqueue(async () => {
          if (staged?.stage !== m.stage) staged = { stage: m.stage, builder: new SnapshotBuilder(snapshot) };
          const b = staged.builder;
          try {
            const muts = typeof m.muts === 'string' ? JSON.parse(m.muts) as RowMutation[] : m.muts;
            for (let i = 0; i < muts.length; i++) {
              b.apply(muts[i]!);
              if ((i & 63) === 63) await slicer.maybePause();
            }
          } catch (err) {
            staged = undefined; // half a stage is no stage: its commit asks for a resync
            throw err;
          }
        });
        break;
      case 'staged':
        enqueue(async () => {
          const st = staged;
          if (st?.stage !== m.stage) return;
          try {
            const next = st.builder.build(m.revision, Date.now());
            st.built = { snapshot: next, serial: m.serial, ix: await runSliced(a.indexSteps(next, m.serial), slicer) };
          } catch (err) {
            staged = undefined;
            throw err;
          }
        });
        break;
      case 'commit':
        enqueue(() => {
          const built = staged?.stage === m.stage ? staged.built : undefined;
          staged = undefined;
          if (!built) {
            // the stage failed here (or never arrived): not acknowledged, every row is asked for again
            log.warn({ stage: m.stage }, 'dns worker: a committed apply was not staged here; asking for a resync');
            post({ t: 'resync', gen: m.gen });
            return;
          }
          snapshot = built.snapshot;
          serial = built.serial;
          a.adoptIndex(built.ix);
          a.index();
          post({ t: 'ack', gen: m.gen });
        });
        break;
      case 'version':
        version = Buffer.from(m.version);
        break;
      case 'apply':
        // Built off to the side, then swapped in one assignment; the index is rebuilt before the
        // next batch is answered, and the main thread hears that this worker serves `gen`. A
        // staged apply not committed by now was given up by the main thread.
        enqueue(async () => {
          staged = undefined;
          try {
            const next = nextSnapshot(snapshot, m.muts, m.revision, Date.now());
            // a large state's index is built in slices while the previous one answers (docs/dns.md "Large states")
            const ix = indexInSlices(next) ? await runSliced(a.indexSteps(next, m.serial), slicer) : undefined;
            snapshot = next;
            serial = m.serial;
            if (ix) a.adoptIndex(ix);
            a.index();
          } catch (err) {
            log.error({ err, gen: m.gen }, 'dns worker: an apply could not be built; asking for a resync');
            post({ t: 'resync', gen: m.gen });
            return;
          }
          post({ t: 'ack', gen: m.gen });
        });
        break;
      case 'reset':
        // every row again (after a resync): built from nothing, as at start
        enqueue(() => {
          staged = undefined;
          snapshot = snapshotOf(m.rows, m.revision);
          serial = m.serial;
          a.index();
          post({ t: 'ack', gen: m.gen });
        });
        break;
      case 'board':
        health.adopt(m.board);
        break;
      case 'rum':
        for (const [key, ip, ms, at] of m.samples) rum.add(key, ip, ms, at);
        break;
      case 'reply': {
        const send = waiting.get(m.id);
        waiting.delete(m.id);
        if (send && m.reply) send(Buffer.from(m.reply.buffer, m.reply.byteOffset, m.reply.byteLength));
        break;
      }
      case 'stop':
        clearInterval(sweep);
        for (const s of sources) s.close();
        void udp.close().then(() => port.close());
        break;
    }
  });
  try {
    post({ t: 'ready', port: await udp.bind(init.port) });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    post({ t: 'failed', message: e.message, code: e.code });
    for (const s of sources) s.close();
    port.close();
  }
}

void run().catch((err: unknown) => post({ t: 'failed', message: err instanceof Error ? err.message : String(err), code: undefined }));
