import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { AsnResponse, CityResponse } from 'maxmind';
import { parseDuration, parseMicros } from '../config/duration.js';
import { MmdbSource } from '../geo/mmdb-source.js';
import type { Logger } from '../log/logger.js';
import { RumStore } from '../rum/port.js';
import { emptySnapshot } from '../../core/snapshot/snapshot.js';
import { Answerer } from './answer.js';
import { questionUnder } from './catalog-zone.js';
import { nameToWire, toFqdn } from '../net/dns-names.js';
import type { IndexImage } from './index-image.js';
import { IndexView } from './index-view.js';
import { createDispatch } from './dispatch.js';
import { DnsMetrics } from './metrics.js';
import { tsigKeyring } from './tsig.js';
import { createDnssec } from './dnssec-setup.js';
import { batchedUdp } from './udp-batched.js';
import { HealthBoardReader } from './health-board.js';
import type { FromWorker, LogLine, ToWorker, WorkerInit } from './worker-protocol.js';

/**
 * A DNS worker thread (docs/dns.md "Workers"): one batched UDP socket that joins the main thread's
 * SO_REUSEPORT group, answering from what the main thread writes in shared memory: the index
 * image (index-image.ts, read through index-view.ts) and the health board (health-board.ts). Its
 * RUM store is its own, fed by message (worker-protocol.ts). Counters go to
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
  let version = Buffer.from(init.version);
  const health = new HealthBoardReader(init.board);
  const lb = cfg.loadbalancer;
  const city = lb.geoip.dbPath ? new MmdbSource<CityResponse>(lb.geoip.dbPath, log) : undefined;
  const asn = lb.asn.dbPath ? new MmdbSource<AsnResponse>(lb.asn.dbPath, log) : undefined;
  const sources = [city, asn].filter((s) => s !== undefined);
  const rum = new RumStore();
  const geo = { city, asn, endpointLocations: lb.geoip.endpointLocations };
  const names = new IndexView(cfg, geo, init.image);
  names.onError = (err) => { log.error({ err }, 'dns worker: a shard of the index image could not be read'); };
  // lookups read `names`; no zone index is built here, so the snapshot is never read
  const empty = emptySnapshot();
  const a = new Answerer({
    config: cfg, health, snapshot: () => empty, serial: () => names.serial, names, geo,
    rum, rand: Math.random, tsigKeys: tsigKeyring(cfg.dns.axfr.tsigKeys),
    versionTxt: () => version,
    sequence: new Uint32Array(init.sequence),
    ...(cfg.dns.dnssec.enabled ? { dnssec: createDnssec(cfg.dns.dnssec, log) } : {}),
  });
  const metrics = new DnsMetrics(init.metrics);
  const d = createDispatch(a, { deadlineMs: parseDuration(cfg.dns.lookupDeadline) ?? 200, queryLog: cfg.dns.queryLog, log, metrics, maxQueryAgeMs: parseDuration(cfg.dns.maxQueryAge) ?? 1000 });
  const waiting = new Map<number, (b: Buffer) => void>();
  const catalog = cfg.dns.catalog ? nameToWire(toFqdn(cfg.dns.catalog.zone)) : undefined;
  let nextId = 0;
  const udp = batchedUdp(d, cfg.dns.listenAddr, {
    reusePort: 'join',
    coalesceUs: parseMicros(cfg.dns.udpCoalesce) ?? 0,
    // the catalog zone's queries too: the main thread keeps the catalog (docs/dns.md "Catalog zone")
    ...(catalog ? { forwards: (req: Buffer) => questionUnder(req, catalog) } : {}),
    forward: cfg.dns.update.enabled || catalog
      ? (req, src, send) => {
        const id = nextId++;
        waiting.set(id, send);
        post({ t: 'forward', id, req, src });
        return true;
      }
      : undefined,
  });
  for (const s of sources) {
    s.onLoad = () => { names.geoChanged(); };
    await s.start();
  }
  const sweep = setInterval(() => rum.sweep(), 60_000);
  sweep.unref();
  /** Takes an image in one step (no query sees half of it) and acknowledges `gen`; a failure asks for the whole image. */
  const take = (image: IndexImage, gen: number) => {
    try {
      names.apply(image);
    } catch (err) {
      log.error({ err, gen }, 'dns worker: an index image could not be taken; asking for a resync');
      post({ t: 'resync', gen });
      return;
    }
    post({ t: 'ack', gen });
  };
  /** the image of a large apply, kept aside until its commit */
  let staged: { stage: number; image: IndexImage } | undefined;
  port.on('message', (m: ToWorker) => {
    switch (m.t) {
      case 'image':
        staged = undefined;
        take(m.image, m.gen);
        break;
      case 'stage':
        staged = { stage: m.stage, image: m.image };
        break;
      case 'commit': {
        const st = staged?.stage === m.stage ? staged : undefined;
        staged = undefined;
        if (!st) {
          // never staged here: not acknowledged, the whole image is asked for instead
          log.warn({ stage: m.stage }, 'dns worker: a committed apply was not staged here; asking for a resync');
          post({ t: 'resync', gen: m.gen });
          break;
        }
        take(st.image, m.gen);
        break;
      }
      case 'version':
        version = Buffer.from(m.version);
        break;
      case 'reset':
        staged = undefined;
        take(m.image, m.gen);
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
