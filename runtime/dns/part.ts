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
import { startDnsServer, type DnsUdpPath } from './server.js';
import type { TransferHandler } from './tcp-dispatch.js';
import { tcpLimitsFromConfig } from './tcp-transport.js';
import { tsigKeyring } from './tsig.js';
import { ZoneSerial } from './zone-serial.js';
import { DnssecResponder } from './dnssec-answer.js';
import { loadDnssecKeys } from './dnssec-keys.js';
import { createTransferHandler } from './zone-transfer.js';
import type { ZoneIndex } from './zone-index.js';
import { parseUpdate } from './update-message.js';
import { applyDnsUpdate, UPDATE_RCODE } from '../txt/dns-update.js';
import { toFqdn } from '../tenancy/names.js';
import type { Logger } from '../log/logger.js';
import type { Config } from '../config/types.js';
import { GslbError } from '../errors.js';
import { logListening } from '../log/listening.js';

declare module '../ports.js' {
  interface Ports {
    /** the bound DNS port (UDP and TCP) */
    dnsPort?: number;
    /** 'batched' when UDP goes through native/udp-batch, else 'dgram' */
    dnsUdpPath?: DnsUdpPath;
    /** the answer path (benchmarks call it without sockets) */
    dnsAnswerer?: Answerer;
    /** how real-user-latency data reaches the `rum` chain step */
    setRumSource?: (source: RumSource) => void;
    /** the SOA serial of the served zones (zone-serial.ts) */
    dnsSerial?: () => number;
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
 * The DNSSEC signer of `dns.dnssec` (docs/dns.md "DNSSEC"). The configuration was checked at load
 * time (runtime/config/load.ts reads the key files too); a key file that changed since is a
 * startup error. Logs each key's tag, role and state once, never its private part.
 */
function createDnssec(cfg: Config['dns']['dnssec'], log: Logger): DnssecResponder {
  const { keys, problems } = loadDnssecKeys(cfg);
  if (problems.length > 0) throw new GslbError('CONFIG_INVALID', `dns.dnssec: ${problems.map((p) => `${p.path.join('.')}: ${p.rule}`).join('; ')}`);
  log.info({ algorithm: cfg.algorithm, keys: keys.map((k) => ({ tag: k.tag, role: k.role, state: k.state })) }, 'dnssec signing');
  return new DnssecResponder(keys, { validity: Math.floor((parseDuration(cfg.signatureValidity) ?? 7 * 86_400_000) / 1000), cacheSize: cfg.cacheSize, now: Date.now });
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
    const dnssec = cfg.dns.dnssec.enabled ? createDnssec(cfg.dns.dnssec, log) : undefined;
    const a: Answerer = new Answerer({
      config: cfg, health: core.health, snapshot: () => core.holder.current, serial: () => serial.current,
      geo: { city, asn, endpointLocations: lb.geoip.endpointLocations },
      rum: { lowest: (client, cands) => rum.lowest(client, cands) },
      rand: Math.random,
      tsigKeys,
      ...(dnssec ? { dnssec } : {}),
      ...(cfg.dns.update.enabled ? { update: createUpdateHandler(core, (): ZoneIndex => a.index(), log) } : {}),
      onUnserved: (row, reason) => (row.kind === 'txtrecord'
        ? log.warn({ txtRecordId: row.id, tenantId: row.tenantId, name: row.name, reason }, 'TXT record not served')
        : log.warn({ serviceId: row.id, tenantId: row.tenantId, domain: row.domain, reason }, 'service name not served')),
    });
    core.ports.setRumSource = (src: RumSource) => { rum = src; };
    const metrics = new DnsMetrics();
    metrics.register(core.metrics);
    const transfer = cfg.dns.axfr.enabled ? createTransferHandler({
      config: cfg, index: () => a.index(), keys: tsigKeys, metrics, log, writeTimeoutMs: tcpLimitsFromConfig(cfg.dns.tcp).messageMs,
    }) : undefined;
    const state: DnsState = { answerer: a, metrics, sources, transfer };
    states.set(core, state);
    core.ports.dnsSerial = () => serial.current;
    core.ports.dnsAnswerer = a;
    // Precompute the DNS view right after each swap (and at start), off the query path.
    a.index();
    for (const src of sources) src.onLoad = () => { a.index(); };
    core.closers.push(core.bus.on('plan_applied', () => { a.index(); }));
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
      tcp: tcpLimitsFromConfig(cfg.dns.tcp),
    });
    core.ports.dnsPort = server.port;
    core.ports.dnsUdpPath = server.udpPath;
    // UDP and TCP share the port (server.ts); one line per socket, like every other listener
    for (const proto of ['udp', 'tcp']) logListening(core.log, `dns ${proto}`, cfg.dns.listenAddr, server.port);
    return async () => {
      for (const s of sources) s.close();
      await server.close();
    };
  },
});
