import { isIP } from 'node:net';
import type { SecureContext } from 'node:tls';
import type { Logger } from '../log/logger.js';
import type { Answerer } from './answer.js';
import { batchSupport } from './batch-socket.js';
import { createDispatch, type Dispatch } from './dispatch.js';
import type { DnsMetrics } from './metrics.js';
import { tcpMessageHandler } from './tcp-dispatch.js';
import { TCP_DEFAULTS, type TcpLimits } from './tcp-table.js';
import { createTcpTransport } from './tcp-transport.js';
import { batchedUdp } from './udp-batched.js';
import { dgramUdp } from './udp-dgram.js';

/** Listener options. */
export interface DnsServerOptions {
  listenAddr: string;
  port: number;
  /** deadline for an answer that waits for a lookup (ms); past it the reply is SERVFAIL */
  deadlineMs: number;
  queryLog: boolean;
  log: Logger;
  metrics: DnsMetrics;
  /**
   * dns.maxQueryAge in ms: UDP queries that waited longer in the receive queue are dropped
   * unanswered (batched path only: dgram gives no receive time; docs/dns.md "Stale queries"); 0 or
   * absent: none are
   */
  maxQueryAgeMs?: number;
  /** TCP limits (idle timeout, message deadline, total and per-source caps); TCP_DEFAULTS for those left out */
  tcp?: Partial<TcpLimits>;
  /**
   * UDP through the batching addon (native/udp-batch) when it loads (default true); false, or
   * GSLBD_DNS_UDP_BATCH=0, keeps Node's dgram socket.
   */
  udpBatch?: boolean;
  /**
   * Open the UDP socket as the first of a SO_REUSEPORT group (batched path only): the address is
   * probed without SO_REUSEPORT first, so anything holding it fails the start with EADDRINUSE;
   * the DNS workers then join the group (docs/dns.md "Workers").
   */
  reusePort?: boolean;
  /** dns.udpCoalesce in microseconds (batched path only; 0 or absent: off; docs/dns.md "Receive coalescing") */
  udpCoalesceUs?: number;
  /**
   * The DNS-over-TLS listener (`dns.tls`; docs/dns.md "Zone transfers over TLS"): the same answers
   * as TCP, with the TCP limits, on its own address and port (0: a free one)
   */
  tls?: { listenAddr: string; port: number; context: SecureContext };
}

/** Which UDP path a listener uses. */
export type DnsUdpPath = 'batched' | 'dgram';

/** A running DNS listener (UDP and TCP on the same port). */
export interface DnsServer {
  port: number;
  /** the bound DNS-over-TLS port; undefined without `tls` */
  tlsPort: number | undefined;
  udpPath: DnsUdpPath;
  /**
   * Closes the UDP socket only: the main thread leaves the SO_REUSEPORT group once the DNS workers
   * have joined it, and TCP keeps listening (docs/dns.md "Workers"). Idempotent.
   */
  leaveUdp: () => Promise<void>;
  /**
   * Opens the UDP socket again after `leaveUdp` (the port probed first, as at start: fails with
   * EADDRINUSE when something else took it): the main thread answers again when no DNS worker is
   * left. Nothing when the socket is open.
   */
  rejoinUdp: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * Starts UDP and TCP listeners on `listenAddr:port` (port 0 picks one free port for both): the UDP
 * transport (udp-batched.ts or udp-dgram.ts) and the TCP one (tcp-transport.ts with
 * tcp-dispatch.ts), sharing one Dispatch (dispatch.ts).
 * UDP goes through the batching addon when it loads (`udpPath` 'batched'), else through dgram.
 * Every packet goes through `answerer.handle`; a PendingAnswer waits for its database at most
 * `deadlineMs`, then is answered (SERVFAIL if still not loaded). Never throws on bad input.
 */
export async function startDnsServer(answerer: Answerer, o: DnsServerOptions): Promise<DnsServer> {
  const d = createDispatch(answerer, o);
  const support = o.udpBatch === false ? { available: false, reason: 'disabled by option' }
    : isIP(o.listenAddr) === 0 ? { available: false, reason: 'listenAddr is not an IP literal' }
    : batchSupport();
  const udpPath: DnsUdpPath = support.available ? 'batched' : 'dgram';
  const batchOpts = { coalesceUs: o.udpCoalesceUs ?? 0, ...(o.reusePort ? { reusePort: 'first' as const } : {}) };
  const makeUdp = () => (udpPath === 'batched' ? batchedUdp(d, o.listenAddr, batchOpts) : dgramUdp(d, o.listenAddr));
  let udp = makeUdp();

  const transport = createTcpTransport({ limits: { ...TCP_DEFAULTS, ...o.tcp }, metrics: o.metrics.tcp, onMessage: tcpMessageHandler(d) });
  const tcp = transport.server;
  tcp.on('error', (err) => o.log.error({ err }, 'dns tcp server error'));
  const listenTcp = (port: number) => new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, o.listenAddr, () => { tcp.off('error', reject); resolve(); });
  });

  let port = -1;
  // With port 0, UDP picks a free port and TCP must get the same one, which something else may
  // hold: retry with a fresh UDP port a bounded number of times.
  for (let attempt = 0; port < 0; attempt++) {
    const p = await udp.bind(o.port);
    try {
      await listenTcp(p);
      port = p;
    } catch (err) {
      await udp.close();
      if (o.port !== 0 || attempt >= 20) throw err;
      udp = makeUdp();
    }
  }
  o.log.info({ address: o.listenAddr, port, udpPath, ...(support.reason ? { batchUnavailable: support.reason } : {}) },
    `dns listening (udp path: ${udpPath})`);
  let tls: Awaited<ReturnType<typeof listenTls>> | undefined;
  try {
    tls = o.tls ? await listenTls(d, o, o.tls) : undefined;
  } catch (err) {
    transport.closeConnections();
    await new Promise<void>((r) => tcp.close(() => r()));
    await udp.close();
    throw err;
  }
  let udpOpen = true;
  const leaveUdp = async () => {
    if (!udpOpen) return;
    udpOpen = false;
    await udp.close();
  };
  let closed = false;
  const rejoinUdp = async () => {
    if (udpOpen || closed) return;
    const next = makeUdp();
    await next.bind(port);
    udp = next;
    udpOpen = true;
  };
  return {
    port,
    tlsPort: tls?.port,
    udpPath,
    leaveUdp,
    rejoinUdp,
    close: async () => {
      closed = true;
      transport.closeConnections();
      await new Promise<void>((r) => tcp.close(() => r()));
      await tls?.close();
      await leaveUdp();
    },
  };
}

/**
 * The DNS-over-TLS listener: the TCP transport with TLS (tcp-transport.ts), the same message
 * handler and limits as TCP, its own connection table and `gslbd_dns_tls_*` counters. Listening
 * fails the start (EADDRINUSE, EACCES on a port below 1024).
 */
async function listenTls(d: Dispatch, o: DnsServerOptions, t: NonNullable<DnsServerOptions['tls']>): Promise<{ port: number; close: () => Promise<void> }> {
  const transport = createTcpTransport({ limits: { ...TCP_DEFAULTS, ...o.tcp }, metrics: o.metrics.tls, onMessage: tcpMessageHandler(d), tls: t.context });
  const server = transport.server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(t.port, t.listenAddr, () => { server.off('error', reject); resolve(); });
  });
  server.on('error', (err) => o.log.error({ err }, 'dns tls server error'));
  const port = (server.address() as { port: number }).port;
  o.log.info({ address: t.listenAddr, port }, 'dns over tls listening');
  return {
    port,
    close: async () => {
      transport.closeConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
