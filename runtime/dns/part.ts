import type { AsnResponse, CityResponse } from 'maxmind';
import type { Core } from '../app.js';
import { PARTS } from '../parts.js';
import { parseDuration } from '../config/duration.js';
import { NO_RUM, type RumSource } from '../balancer/types.js';
import { MmdbSource } from '../geo/mmdb-source.js';
import { simulateRoutes } from './routes.js';
import { Answerer, type AnswerDeps } from './answer.js';
import { ReplayGuard } from './tsig-replay.js';
import { DnsMetrics } from './metrics.js';
import { startDnsServer, type DnsServer, type DnsUdpPath } from './server.js';
import { performance } from 'node:perf_hooks';
import type { GeoDeps } from './service-plan.js';
import type { TransferHandler } from './tcp-dispatch.js';
import { tcpLimitsFromConfig } from './tcp-transport.js';
import { tsigKeyring } from './tsig.js';
import { ZoneSerial } from './zone-serial.js';
import { createDnssec } from './dnssec-setup.js';
import { createTransferHandler } from './zone-transfer.js';
import { DNS_TABLES, type ZoneIndex } from './zone-index.js';
import { DnsWorkers } from './workers.js';
import { healthDelta, healthTable, type RumSample } from './worker-protocol.js';
import { planMutations } from '../../controller/apply/apply.js';
import { rowsOf, type RowMutation, type Snapshot } from '../snapshot/snapshot.js';
import type { Row } from '../model/types.js';
import type { Plan } from '../../controller/plan/types.js';
import { parseUpdate } from './update-message.js';
import { applyDnsUpdate, UPDATE_RCODE } from '../txt/dns-update.js';
import { toFqdn } from '../tenancy/names.js';
import type { Logger } from '../log/logger.js';
import { logListening } from '../log/listening.js';

declare module '../ports.js' {
  interface Ports {
    /** the bound DNS port (UDP and TCP) */
    dnsPort?: number;
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

/**
 * The DNS data plane part: authoritative UDP/TCP server on dns.listenAddr:dns.port, geo databases
 * with reload, zone transfers (`dns.axfr`, zone-transfer.ts) with TSIG, the persisted SOA serial
 * (an apply hook, zone-serial.ts), DNS metrics, and POST /api/v1/simulate. Publishes its ports
 * (below): the bound port, the UDP path, the answer path (for benchmarks), the SOA serial and how
 * RUM data reaches the `rum` chain step.
 */
interface DnsState {
  answerer: Answerer; metrics: DnsMetrics; sources: MmdbSource<CityResponse | AsnResponse>[]; transfer: TransferHandler | undefined;
  serial: ZoneSerial; workers: DnsWorkers | undefined;
  /** the Uint32 cell of the shared round-robin counter */
  sequence: SharedArrayBuffer;
  /** RUM samples to copy to the workers (set as the RUM source's onSample) */
  rumFeed?: (key: string, ip: string, ms: number, at: number) => void;
}

/** DNS mutations per message of a staged apply (about 1 MB to clone) */
const STAGE_PART = 2000;
const isDnsKind = (kind: string) => (DNS_TABLES as readonly string[]).includes(kind);
const dnsMutations = (muts: RowMutation[]) => muts.filter((m) => isDnsKind(m.op === 'put' ? m.row.kind : m.kind));
/** The rows DNS answers from (the DNS_TABLES), for a worker's first snapshot. */
const dnsRows = (s: Snapshot): Row[] => DNS_TABLES.flatMap((k) => [...rowsOf(s, k).values()]);

/**
 * Keeps the DNS workers' copies current (docs/dns.md "Workers"): every apply that changes a DNS
 * row is posted at once (after the serial hook, so it carries the new serial); health verdicts and
 * RUM samples are coalesced to one message per event-loop turn. Health goes as the verdicts of the
 * endpoints that changed; the whole table only after an apply (its set of served endpoints
 * changed) or a change that may touch any endpoint (cluster liveness).
 */
function feedWorkers(core: Core, state: DnsState): void {
  let healthDue = false;
  /** an apply changed the served endpoints: the next copy is the whole table */
  let tableDue = false;
  /** earliest time (performance.now) of the next whole-table copy: copies of a large table are spaced out */
  let nextCopy = 0;
  core.health.trackChanges();
  const flushHealth = () => {
    const w = state.workers;
    if (!w) { healthDue = false; return; }
    const wait = nextCopy - performance.now();
    const changes = core.health.takeChanges();
    if (!changes.all && !tableDue) {
      healthDue = false;
      const { rows, cleared } = healthDelta(changes.endpoints, core.health);
      if (rows.length > 0 || cleared.length > 0) w.healthDelta(rows, cleared);
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
    w.health(healthTable(state.answerer.index(), core.health));
    // The table is O(endpoints): with tens of thousands of members and cluster liveness flapping,
    // a copy every turn would take the whole thread. At most a tenth of it goes to copies: after a
    // copy that took t ms, the next waits 9·t ms (nothing for small tables).
    const took = performance.now() - t0;
    nextCopy = took >= 1 ? performance.now() + 9 * took : 0;
  };
  const scheduleHealth = () => {
    if (healthDue || !state.workers) return;
    healthDue = true;
    setImmediate(flushHealth);
  };
  const scheduleTable = () => {
    tableDue = true;
    scheduleHealth();
  };
  core.health.onChange = scheduleHealth;
  core.closers.push(() => { core.health.onChange = undefined; });
  /** the large apply staged on the workers by `prepare`, committed at its swap */
  let staged: { plan: Plan; stage: number } | undefined;
  core.closers.push(core.applyHooks.add({
    // A large apply (controller/apply/apply-sliced.ts) posts its DNS mutations in parts before its
    // transaction, one per slice; the workers build the next snapshot and zone index in slices of
    // their own and swap at the commit, so neither thread stops answering for the whole plan.
    prepare: async (plan, next, _prev, slicer) => {
      staged = undefined;
      const w = state.workers;
      if (!w) return;
      const stage = w.beginStage();
      let part: RowMutation[] = [];
      let any = false;
      for (const c of plan.changes) {
        if (!isDnsKind(c.kind)) continue;
        part.push(c.op === 'delete' ? { op: 'delete', kind: c.kind, id: c.id } : { op: 'put', row: c.after! });
        if (part.length < STAGE_PART) continue;
        w.stagePart(stage, part);
        any = true;
        part = [];
        await slicer.maybePause();
      }
      if (part.length > 0) { w.stagePart(stage, part); any = true; }
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
  core.ports.applySettled = () => state.workers?.settled();
  core.ports.dnsWorkerQueries = () => state.metrics.perWorker();
  core.ports.dnsAnswerTotals = () => state.metrics.answerTotals();
  core.ports.dnsWorkersRunning = () => state.workers?.running ?? 0;
}
// Per core, so several daemons in one process (tests) do not share state.
const states = new WeakMap<Core, DnsState>();

/**
 * RFC 2136 UPDATE of TXT records (docs/dns.md "Dynamic updates"): the grant of the key that
 * signed the message decides the tenant; a signature seen before, or older than the key's last
 * accepted one, is a replay and refused (RFC 8945 §5.2.3); every message is logged with its outcome.
 */
function createUpdateHandler(core: Core, index: () => ZoneIndex, log: Logger): NonNullable<AnswerDeps['update']> {
  const grants = new Map(core.config.dns.update.grants.map((g) => [toFqdn(g.key), g]));
  const replay = new ReplayGuard();
  return (req, signed) => {
    const msg = parseUpdate(req);
    if (!msg.ok) return msg.rcode;
    const key = signed?.key;
    if (signed && !replay.accept(signed.key, signed.timeSigned, signed.mac, Math.floor(Date.now() / 1000))) {
      log.warn({ key, zone: msg.zone }, 'dns update refused: a replayed or older signature');
      return UPDATE_RCODE.REFUSED;
    }
    try {
      const out = applyDnsUpdate(core, key === undefined ? undefined : grants.get(toFqdn(key)), (z) => index().zones.has(z), msg);
      log.info({ key, zone: msg.zone, rcode: out.rcode, ...(out.reason ? { reason: out.reason } : {}), ...(out.names ? { names: out.names } : {}) }, 'dns update');
      return out.rcode;
    } catch (err) {
      log.error({ err, key, zone: msg.zone }, 'dns update failed');
      return UPDATE_RCODE.SERVFAIL;
    }
  };
}

/**
 * Starts dns.workers - 1 worker threads joining the UDP socket's SO_REUSEPORT group, with the
 * current DNS rows, serial and health. Without the batched path (no SO_REUSEPORT in dgram on
 * Node 20) the main thread answers alone, and says so. A worker that cannot start fails the start.
 */
async function startWorkers(core: Core, state: DnsState, server: DnsServer): Promise<void> {
  const cfg = core.config;
  const log = core.log.child({ component: 'dns' });
  if (server.udpPath !== 'batched') {
    log.warn({ workers: cfg.dns.workers }, 'dns.workers needs the batched UDP path; the main thread answers alone');
    return;
  }
  const { answerer: a, metrics } = state;
  const snap = core.holder.current;
  const { workers, ready } = DnsWorkers.start({
    count: cfg.dns.workers - 1, log, metrics,
    init: { config: cfg, sequence: state.sequence, port: server.port, rows: dnsRows(snap), revision: snap.revision, serial: state.serial.current, version: core.holder.provenance.rdata, health: healthTable(a.index(), core.health) },
    answer: (req, src) => {
      const t0 = performance.now();
      const r = a.handle(req, src, true, false) as Buffer | null;
      metrics.record(a.lastQtype, a.lastRcode, (performance.now() - t0) / 1000);
      return r;
    },
  });
  state.workers = workers;
  try {
    await ready;
  } catch (err) {
    state.workers = undefined;
    await workers.close();
    await server.close();
    throw err;
  }
  log.info({ workers: cfg.dns.workers, port: server.port }, 'dns workers answering');
}

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
    const tsigKeys = tsigKeyring(cfg.dns.axfr.tsigKeys);
    const geo: GeoDeps = { city, asn, endpointLocations: lb.geoip.endpointLocations };
    core.ports.dnsGeo = geo;
    const dnssec = cfg.dns.dnssec.enabled ? createDnssec(cfg.dns.dnssec, log) : undefined;
    // one rotation counter for every answering thread (the workers get the same buffer)
    const sequence = new Uint32Array(new SharedArrayBuffer(4));
    const a: Answerer = new Answerer({
      sequence,
      config: cfg, health: core.health, snapshot: () => core.holder.current, serial: () => serial.current,
      geo,
      rum: { lowest: (client, cands) => rum.lowest(client, cands) },
      rand: Math.random,
      tsigKeys,
      ...(dnssec ? { dnssec } : {}),
      ...(cfg.dns.update.enabled ? { update: createUpdateHandler(core, (): ZoneIndex => a.index(), log) } : {}),
      versionTxt: () => core.holder.provenance.rdata,
      onUnserved: (row, reason) => (row.kind === 'txtrecord'
        ? log.warn({ txtRecordId: row.id, tenantId: row.tenantId, name: row.name, reason }, 'TXT record not served')
        : log.warn({ serviceId: row.id, tenantId: row.tenantId, domain: row.domain, reason }, 'service name not served')),
    });
    core.ports.setRumSource = (src: RumSource) => { rum = src; src.onSample = (...a) => state.rumFeed?.(...a); };
    const metrics = new DnsMetrics();
    metrics.register(core.metrics);
    const transfer = cfg.dns.axfr.enabled ? createTransferHandler({
      config: cfg, index: () => a.index(), keys: tsigKeys, metrics, log, writeTimeoutMs: tcpLimitsFromConfig(cfg.dns.tcp).messageMs,
    }) : undefined;
    const state: DnsState = { answerer: a, metrics, sources, transfer, serial, sequence: sequence.buffer as SharedArrayBuffer, workers: undefined };
    states.set(core, state);
    feedWorkers(core, state);
    core.ports.dnsSerial = () => serial.current;
    core.ports.dnsAnswerer = a;
    // Precompute the DNS view right after each swap (and at start), off the query path.
    a.index();
    for (const src of sources) src.onLoad = () => { a.index(); };
    core.closers.push(core.bus.on('plan_applied', () => { a.index(); }));
    // A large apply (controller/apply/apply-sliced.ts) builds the next index before its swap, in
    // slices, and installs it at the swap: the index() above then finds it built.
    core.closers.push(core.applyHooks.add({
      prepare: async (plan, next, _prev, slicer) => {
        const steps = a.indexSteps(next, serial.after(plan));
        for (let r = steps.next(); ; r = steps.next()) {
          if (r.done) { const ix = r.value; return () => { a.adoptIndex(ix); }; }
          await slicer.maybePause();
        }
      },
    }));
    const deadline = parseDuration(cfg.dns.lookupDeadline) ?? 200;
    ext.apiPlugins.push(async (app) => { await app.register(simulateRoutes(a, deadline)); });
  },
  async start(core) {
    const cfg = core.config;
    const state = states.get(core)!;
    const { answerer, metrics, sources } = state;
    for (const s of sources) await s.start();
    const server = await startDnsServer(answerer, {
      listenAddr: cfg.dns.listenAddr, port: cfg.dns.port, deadlineMs: parseDuration(cfg.dns.lookupDeadline) ?? 200,
      queryLog: cfg.dns.queryLog, log: core.log.child({ component: 'dns' }), metrics, transfer: () => state.transfer,
      maxQueryAgeMs: parseDuration(cfg.dns.maxQueryAge) ?? 1000,
      tcp: tcpLimitsFromConfig(cfg.dns.tcp), reusePort: cfg.dns.workers > 1,
    });
    if (cfg.dns.workers > 1) await startWorkers(core, state, server);
    core.ports.dnsPort = server.port;
    core.ports.dnsUdpPath = server.udpPath;
    // UDP and TCP share the port (server.ts); one line per socket, like every other listener
    for (const proto of ['udp', 'tcp']) logListening(core.log, `dns ${proto}`, cfg.dns.listenAddr, server.port);
    return async () => {
      const w = state.workers;
      state.workers = undefined;
      await w?.close();
      for (const s of sources) s.close();
      await server.close();
    };
  },
});
