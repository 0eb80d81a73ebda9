import type { AsnResponse, CityResponse } from 'maxmind';
import type { Core } from '../app.js';
import { PARTS } from '../parts.js';
import { parseDuration, parseMicros } from '../config/duration.js';
import { NO_RUM, type RumSource } from '../balancer/types.js';
import { MmdbSource } from '../geo/mmdb-source.js';
import { simulateRoutes } from './routes.js';
import { Answerer } from './answer.js';
import { DnsMetrics } from './metrics.js';
import { startDnsServer, type DnsUdpPath } from './server.js';
import type { GeoDeps } from './service-plan.js';
import { tcpLimitsFromConfig } from './tcp-transport.js';
import { tsigKeyring } from './tsig.js';
import { ZoneSerial } from './zone-serial.js';
import { IxfrJournal } from './ixfr-journal.js';
import { IndexImageWriter } from './index-image.js';
import { createDnssec } from './dnssec-setup.js';
import { createTransferHandler } from './zone-transfer.js';
import { TransferStep } from './step-transfer.js';
import { takeDnsSteps } from './step-registry.js';
import { keysWithoutScope, transferScopes } from './transfer-scope.js';
import { indexInSlices } from './zone-index.js';
import { WorkerFeed, startWorkers } from './worker-feed.js';
import { createNotifier } from './notify-setup.js';
import { createDnsTls, type DnsTlsListener } from './tls-setup.js';
import { fqdn } from './zone-index.js';
import type { Notifier } from './notifier.js';
import { logListening } from '../log/listening.js';
import { Slicer, runSliced } from '../../core/apply/slicer.js';
import type { Logger } from '../log/logger.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the bound DNS port (UDP and TCP) */
    dnsPort?: number;
    /** the bound DNS-over-TLS port (`dns.tls`) */
    dnsTlsPort?: number;
    /** 'batched' when UDP goes through native/udp-batch, else 'dgram' */
    dnsUdpPath?: DnsUdpPath;
    /** the answer path (benchmarks call it without sockets) */
    dnsAnswerer?: Answerer;
    /** the geo databases the answer path uses (routing tests and traffic replay of the GitOps controller use them too) */
    dnsGeo?: GeoDeps;
    /** how real-user-latency data reaches the `rum` chain step */
    setRumSource?: (source: RumSource) => void;
    /** the SOA serial of the served zones (zone-serial.ts) */
    dnsSerial?: () => number;
    /**
     * Resolves once every DNS worker thread answers from the newest applied snapshot; undefined
     * when they already do, or there are none. The API awaits it before a write's response.
     */
    applySettled?: () => Promise<void> | undefined;
    /** queries handled per answering thread (0: the main thread, 1…: DNS workers) */
    dnsWorkerQueries?: () => number[];
    /** answered queries and SERVFAIL answers so far over every thread (DnsMetrics.answerTotals) */
    dnsAnswerTotals?: () => { queries: number; servfail: number };
    /** DNS worker threads running (0 once stopped) */
    dnsWorkersRunning?: () => number;
  }
}


/** What the DNS part keeps per core, from its setup to its start and stop. */
interface DnsState {
  answerer: Answerer;
  metrics: DnsMetrics;
  sources: MmdbSource<CityResponse | AsnResponse>[];
  /** the Uint32 cell of the shared round-robin counter */
  sequence: SharedArrayBuffer;
  feed: WorkerFeed;
  /** the DNS-over-TLS listener to open (`dns.tls`) */
  tls: DnsTlsListener | undefined;
}

// Per core, so several daemons in one process (tests) do not share state.
const states = new WeakMap<Core, DnsState>();

/**
 * The main thread's index being built in slices after a one-turn apply of a large state, and
 * what is told once it is installed (the NOTIFY sender, the DNS workers).
 */
class SlicedBuild {
  /** the build under way; undefined when none is */
  current: Promise<void> | undefined = undefined;

  constructor(
    private readonly a: Answerer, private readonly core: Core, private readonly serial: ZoneSerial,
    private readonly feed: WorkerFeed, private readonly notifier: Notifier | undefined, private readonly log: Logger,
  ) {}

  /** Starts a build unless one is under way (it builds again while the state moved on meanwhile). */
  start(): void {
    const a = this.a;
    this.current ??= buildIndexInSlices(a, this.core, () => this.serial.current, this.log)
      .then(() => { this.notifier?.indexInstalled(a.index()); return this.feed.publishSliced(a.index(), new Slicer(10)); })
      .catch((err: unknown) => { this.log.error({ err }, 'dns index image failed'); })
      .finally(() => { this.current = undefined; this.feed.indexInstalled(); });
  }
}

/**
 * Builds the index of the current snapshot in slices and installs it, again while the state
 * moved on during a build; `holdIndex` keeps the previous index answering meanwhile. Never rejects
 * (a failed build is logged; `index()` then builds in one turn, as for a small state).
 */
async function buildIndexInSlices(a: Answerer, core: Core, serialNow: () => number, log: Logger): Promise<void> {
  a.holdIndex = true;
  const slicer = new Slicer(10);
  try {
    while (!a.indexCurrent()) {
      const snap = core.holder.current;
      const ix = await runSliced(a.indexSteps(snap, serialNow()), slicer);
      if (core.holder.current === snap) a.adoptIndex(ix);
    }
  } catch (err) {
    log.error({ err }, 'dns index build failed; built in one turn instead');
  } finally {
    a.holdIndex = false;
  }
}

/**
 * The DNS data plane part: authoritative UDP/TCP server on dns.listenAddr:dns.port, geo databases
 * with reload, zone transfers (`dns.axfr`, zone-transfer.ts) with TSIG, the persisted SOA serial
 * (an apply hook, zone-serial.ts), DNS metrics, and POST /api/v1/simulate. Publishes its ports
 * (below): the bound port, the UDP path, the answer path (for benchmarks), the SOA serial and how
 * RUM data reaches the `rum` chain step.
 */
PARTS.push({
  name: 'dns',
  setup(core, ext) {
    const cfg = core.config;
    const log = core.log.child({ component: 'dns' });
    const lb = cfg.loadbalancer;
    const city = lb.geoip.dbPath ? new MmdbSource<CityResponse>(lb.geoip.dbPath, log) : undefined;
    const asn = lb.asn.dbPath ? new MmdbSource<AsnResponse>(lb.asn.dbPath, log) : undefined;
    const sources: DnsState['sources'] = [];
    if (city) sources.push(city);
    if (asn) sources.push(asn);
    let rum: RumSource = NO_RUM;
    const serial = new ZoneSerial(core.db);
    core.closers.push(core.applyHooks.add(serial.hook()));
    // the IXFR journal: its hook reads the serial the serial's hook (registered first) advances to
    const journal = cfg.dns.axfr.enabled && cfg.dns.axfr.journalSize > 0 ? new IxfrJournal(core.db, cfg, serial, () => core.holder.current, log) : undefined;
    if (journal) { core.closers.push(core.applyHooks.add(journal.hook())); journal.rebuildLater(); }
    const tsigKeys = tsigKeyring(cfg.dns.axfr.tsigKeys);
    const geo: GeoDeps = { city, asn, endpointLocations: lb.geoip.endpointLocations };
    core.ports.dnsGeo = geo;
    const dnssec = cfg.dns.dnssec.enabled ? createDnssec(cfg.dns.dnssec, log) : undefined;
    // one rotation counter for every answering thread (the workers get the same buffer)
    const sequence = new Uint32Array(new SharedArrayBuffer(4));
    const metrics = new DnsMetrics();
    metrics.register(core.metrics);
    // DNS over TLS (XoT, RFC 9103): the certificate and key read now, so a bad pair stops the setup
    const tls = createDnsTls(cfg.dns);
    if (tls) metrics.tls.register(core.metrics);
    const transfer = cfg.dns.axfr.enabled ? createTransferHandler({
      config: cfg, index: () => a.index(), keys: tsigKeys, scopes: transferScopes(cfg.dns), metrics, log, writeTimeoutMs: tcpLimitsFromConfig(cfg.dns.tcp).messageMs, journal,
    }) : undefined;
    // keys that used to transfer the whole zone and now transfer nothing (docs/dns.md "Who gets which records")
    if (transfer) for (const key of keysWithoutScope(cfg.dns)) log.warn({ key }, 'dns transfers signed with this TSIG key are refused: it has no tenant and no grant (set tenant: system for a secondary)');
    const a: Answerer = new Answerer({
      sequence,
      config: cfg, health: core.health, snapshot: () => core.holder.current, serial: () => serial.current,
      geo,
      rum: { lowest: (client, cands) => rum.lowest(client, cands) },
      rand: Math.random,
      tsigKeys,
      ...(dnssec ? { dnssec } : {}),
      // the features' steps (the TXT feature's UPDATE), asked first
      // the catalog zone is the server's own listing: no feature writes into it
      steps: takeDnsSteps(core, { servesZone: (z) => a.index().zones.has(z) && fqdn(z) !== a.index().catalog?.zone.name }),
      ...(transfer ? { transfer: new TransferStep(transfer, log, cfg.dns.axfr.tlsOnly) } : {}),
      versionTxt: () => core.holder.provenance.rdata,
      onUnserved: (row, reason) => (row.kind === 'txtrecord'
        ? log.warn({ txtRecordId: row.id, tenantId: row.tenantId, name: row.name, reason }, 'TXT record not served')
        : log.warn({ serviceId: row.id, tenantId: row.tenantId, domain: row.domain, reason }, 'service name not served')),
    });
    const feed = new WorkerFeed(core, a, new IndexImageWriter());
    core.ports.setRumSource = (src: RumSource) => { rum = src; src.onSample = (key, ip, ms, at) => { feed.rum(key, ip, ms, at); }; };
    states.set(core, { answerer: a, metrics, sources, sequence: sequence.buffer as SharedArrayBuffer, feed, tls });
    core.ports.dnsSerial = () => serial.current;
    core.ports.dnsAnswerer = a;
    // Precompute the DNS view right after each swap (and at start), off the query path.
    a.index();
    // NOTIFY to the secondaries (notifier.ts): told every installed index, it sends when a serial changed
    const notifier = createNotifier(cfg, tsigKeys, metrics, log);
    notifier?.seed(a.index());
    if (notifier) core.closers.push(() => { notifier.close(); });
    for (const src of sources) src.onLoad = () => { a.index(); };
    const sliced = new SlicedBuild(a, core, serial, feed, notifier, log);
    // After a one-turn apply (a REST write) of a large state, the next index is built in slices
    // while the previous one answers; the API's wait for a write (applySettled) includes it.
    // Each index installed is told to the DNS workers as a change of the index image (worker-feed.ts).
    core.closers.push(core.bus.on('plan_applied', () => {
      if (a.indexCurrent()) { notifier?.indexInstalled(a.index()); return; }
      if (indexInSlices(core.holder.current)) {
        sliced.start();
      } else {
        feed.publish(a.index());
        notifier?.indexInstalled(a.index());
      }
    }));
    // A large apply (core/apply/apply-sliced.ts) builds the next index before its swap, in
    // slices, and its image for the workers, and installs both at the swap: the index() above then
    // finds it built.
    core.closers.push(core.applyHooks.add({
      prepare: async (plan, next, _prev, slicer) => {
        const ix = await runSliced(a.indexSteps(next, serial.after(plan)), slicer);
        const image = await feed.stageImage(ix, slicer);
        return () => { a.adoptIndex(ix); image?.(); };
      },
    }));
    // the API's wait for a write: the index built in slices (after a one-turn apply of a large
    // state) and its image taken by every worker
    core.ports.applySettled = () => {
      const build = sliced.current;
      return build ? build.then(() => feed.workers?.settled()) : feed.workers?.settled();
    };
    core.ports.dnsWorkerQueries = () => metrics.perWorker();
    core.ports.dnsAnswerTotals = () => metrics.answerTotals();
    core.ports.dnsWorkersRunning = () => feed.workers?.running ?? 0;
    const deadline = parseDuration(cfg.dns.lookupDeadline) ?? 200;
    ext.apiPlugins.push(async (app) => { await app.register(simulateRoutes(a, deadline)); });
  },
  async start(core) {
    const cfg = core.config;
    const state = states.get(core)!;
    const { answerer, metrics, sources, feed } = state;
    for (const s of sources) await s.start();
    const server = await startDnsServer(answerer, {
      listenAddr: cfg.dns.listenAddr, port: cfg.dns.port, deadlineMs: parseDuration(cfg.dns.lookupDeadline) ?? 200,
      queryLog: cfg.dns.queryLog, log: core.log.child({ component: 'dns' }), metrics,
      maxQueryAgeMs: parseDuration(cfg.dns.maxQueryAge) ?? 1000,
      tcp: tcpLimitsFromConfig(cfg.dns.tcp), reusePort: cfg.dns.workers > 0, udpCoalesceUs: parseMicros(cfg.dns.udpCoalesce) ?? 0,
      ...(state.tls ? { tls: state.tls } : {}),
    });
    if (cfg.dns.workers > 0) await startWorkers(core, feed, answerer, metrics, state.sequence, server);
    core.ports.dnsPort = server.port;
    core.ports.dnsUdpPath = server.udpPath;
    // UDP and TCP share the port (server.ts); one line per socket, like every other listener
    for (const proto of ['udp', 'tcp']) logListening(core.log, `dns ${proto}`, cfg.dns.listenAddr, server.port);
    if (state.tls && server.tlsPort !== undefined) {
      core.ports.dnsTlsPort = server.tlsPort;
      logListening(core.log, 'dns tls', state.tls.listenAddr, server.tlsPort);
    }
    return async () => {
      const w = feed.workers;
      feed.workers = undefined;
      feed.board = undefined;
      await w?.close();
      for (const s of sources) s.close();
      await server.close();
    };
  },
});
