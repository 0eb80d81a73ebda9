import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../log/logger.js';
import type { Answerer, PendingAnswer } from './answer.js';
import { BatchSocket, batchSupport } from './batch-socket.js';
import { rcodeName, typeName, type DnsMetrics } from './metrics.js';
import type { TcpMessageHandler } from './tcp-connection.js';
import { TCP_DEFAULTS, type TcpLimits } from './tcp-table.js';
import { createTcpTransport } from './tcp-transport.js';
import { DecodeStatus, ParsedQuery, decodeQuery } from './wire-query.js';

/** Listener options. */
export interface DnsServerOptions {
  listenAddr: string;
  port: number;
  /** deadline for an answer that waits for a lookup (ms); past it the reply is SERVFAIL */
  deadlineMs: number;
  queryLog: boolean;
  log: Logger;
  metrics: DnsMetrics;
  /** TCP limits (idle timeout, message deadline, total and per-source caps); TCP_DEFAULTS for those left out */
  tcp?: Partial<TcpLimits>;
  /** the zone-transfer handler, when a transfer part installed one (read per query) */
  transfer?: () => TransferHandler | undefined;
  /**
   * UDP through the batching addon (native/udp-batch) when it loads (default true); false, or
   * GSLBD_DNS_UDP_BATCH=0, keeps Node's dgram socket.
   */
  udpBatch?: boolean;
}

/** Which UDP path a listener uses. */
export type DnsUdpPath = 'batched' | 'dgram';

/**
 * Answers an AXFR or IXFR request received over TCP: the reply messages in order (each without
 * the TCP length prefix), or undefined to let the server answer REFUSED.
 */
export type TransferHandler = (req: Buffer, src: string) => Promise<Buffer[] | undefined> | Buffer[] | undefined;

/** The query type of a request when it is a well-formed AXFR or IXFR query, else 0. */
function transferType(msg: Buffer): number {
  const q = transferProbe;
  if (decodeQuery(msg, q) !== DecodeStatus.Ok) return 0;
  return q.qtype === 252 || q.qtype === 251 ? q.qtype : 0;
}
const transferProbe = new ParsedQuery();

/** A running DNS listener (UDP and TCP on the same port). */
export interface DnsServer { port: number; udpPath: DnsUdpPath; close: () => Promise<void> }

/** The UDP half of a listener, whichever path carries it. */
interface UdpListener { bind(port: number): Promise<number>; close(): Promise<void> }

function identityLookup(address: string, _opts: unknown, cb: (err: Error | null, address: string, family: number) => void): void {
  cb(null, address, isIP(address));
}

/** Sends a UDP reply; a source port 0 (spoofed or broken) throws synchronously in dgram, so it is skipped. */
function sendTo(sock: UdpSocket, b: Buffer, port: number, address: string): void {
  if (port === 0) return;
  try { sock.send(b, port, address); } catch { /* unreachable peer: nothing to answer */ }
}

const isPending = (r: Buffer | PendingAnswer | null): r is PendingAnswer => r !== null && !Buffer.isBuffer(r);

/**
 * Starts UDP and TCP listeners on `listenAddr:port` (port 0 picks one free port for both).
 * UDP goes through the batching addon when it loads (`udpPath` 'batched'), else through dgram.
 * Every packet goes through `answerer.handle`; a PendingAnswer waits for its database at most
 * `deadlineMs`, then is answered (SERVFAIL if still not loaded). Never throws on bad input.
 */
export async function startDnsServer(answerer: Answerer, o: DnsServerOptions): Promise<DnsServer> {
  const fam = isIP(o.listenAddr) === 6 ? 'udp6' : 'udp4';

  const finish = (t0: number, src: string, replied: boolean) => {
    const secs = (performance.now() - t0) / 1000;
    o.metrics.record(answerer.lastQtype, answerer.lastRcode, secs);
    if (o.queryLog && replied) {
      o.log.info({
        name: answerer.lastName, type: typeName(answerer.lastQtype), src, rcode: rcodeName(answerer.lastRcode),
        answers: answerer.lastAnswers.map((c) => c.ip), duration_us: Math.round(secs * 1e6),
      }, 'dns query');
    }
  };

  // A lookup that may wait: race the database against the deadline, then answer without waiting.
  // Settles once the reply is sent (TCP counts the connection busy until then).
  const later = (p: PendingAnswer, req: Buffer, src: string, udp: boolean, t0: number, send: (b: Buffer) => void): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((r) => { timer = setTimeout(r, o.deadlineMs); });
    return Promise.race([p.wait, deadline]).then(() => {
      clearTimeout(timer);
      const r = answerer.handle(req, src, udp, false) as Buffer | null;
      if (r) send(r);
      finish(t0, src, r !== null);
    });
  };

  const dgramUdp = (): UdpListener => {
    // Replies go to the literal address a query came from: an identity lookup skips dns.lookup and
    // the extra tick it costs on every send.
    const sock = createSocket({ type: fam, recvBufferSize: 8 << 20, sendBufferSize: 8 << 20, lookup: identityLookup as never });
    sock.on('error', (err) => o.log.error({ err }, 'dns udp socket error'));
    sock.on('message', (msg, rinfo) => {
      const t0 = performance.now();
      let r: Buffer | PendingAnswer | null;
      try {
        r = answerer.handle(msg, rinfo.address, true, true);
      } catch (err) {
        o.log.error({ err }, 'dns answer failed');
        return;
      }
      if (isPending(r)) {
        // A failed deferred answer is logged like a failed direct one: an unhandled rejection would
        // end the daemon.
        later(r, msg, rinfo.address, true, t0, (b) => sendTo(sock, b, rinfo.port, rinfo.address))
          .catch((err: unknown) => o.log.error({ err }, 'dns answer failed'));
        return;
      }
      if (r) sendTo(sock, r, rinfo.port, rinfo.address);
      finish(t0, rinfo.address, r !== null);
    });
    return {
      bind: (port) => new Promise<number>((resolve, reject) => {
        sock.once('error', reject);
        sock.bind(port, o.listenAddr, () => { sock.off('error', reject); resolve(sock.address().port); });
      }),
      close: () => new Promise<void>((r) => { try { sock.close(() => r()); } catch { r(); } }),
    };
  };

  // The batched path: one callback per recvmmsg batch; each reply is written straight into its
  // send slot of the shared memory and all are sent with one sendmmsg when the callback returns.
  const batchedUdp = (): UdpListener => {
    let bs: BatchSocket | undefined;
    const onBatch = (count: number) => {
      const s = bs!;
      const mem = s.mem;
      const max = s.txSlot;
      for (let i = 0; i < count; i++) {
        if (s.rxLength(i) < 0) continue;
        const t0 = performance.now();
        const src = s.source(i);
        const req = s.request(i);
        let r: number | Buffer | PendingAnswer | null;
        try {
          r = answerer.handleInto(req, src, true, mem, s.txOffset(i), max);
        } catch (err) {
          o.log.error({ err }, 'dns answer failed');
          continue;
        }
        if (typeof r === 'number') {
          s.setReply(i, r);
          finish(t0, src, true);
        } else if (r === null) {
          finish(t0, src, false);
        } else if (Buffer.isBuffer(r)) {
          // Longer than a send slot: sent on its own.
          s.sendTo(r, s.sourceFamily(i), s.sourceBytes(i), s.sourcePort(i));
          finish(t0, src, true);
        } else {
          // The slot is reused by the next batch: keep copies of the request and the source.
          const family = s.sourceFamily(i);
          const addr = s.sourceBytes(i);
          const port = s.sourcePort(i);
          later(r, Buffer.from(req), src, true, t0, (b) => { s.sendTo(b, family, addr, port); })
            .catch((err: unknown) => o.log.error({ err }, 'dns answer failed'));
        }
      }
    };
    return {
      bind: (port) => {
        bs = BatchSocket.open(o.listenAddr, port, onBatch);
        return Promise.resolve(bs.port);
      },
      close: async () => {
        if (!bs) return;
        bs.close();
        // The descriptor is closed in libuv's close phase, after the next check phase at the latest.
        for (let k = 0; k < 10 && !bs.stats().closed; k++) await new Promise<void>((r) => setImmediate(r));
      },
    };
  };

  const support = o.udpBatch === false ? { available: false, reason: 'disabled by option' }
    : isIP(o.listenAddr) === 0 ? { available: false, reason: 'listenAddr is not an IP literal' }
    : batchSupport();
  const udpPath: DnsUdpPath = support.available ? 'batched' : 'dgram';
  const makeUdp = udpPath === 'batched' ? batchedUdp : dgramUdp;
  let udp = makeUdp();

  const frame = (b: Buffer) => { const h = Buffer.allocUnsafe(2); h.writeUInt16BE(b.length); return Buffer.concat([h, b]); };
  // One complete TCP message: a zone transfer goes to the transfer handler, anything else to the
  // answerer (its TCP replies carry the length prefix already).
  const onTcpMessage: TcpMessageHandler = (msg, src, reply) => {
    const t0 = performance.now();
    const xfr = o.transfer?.();
    if (xfr && transferType(msg) !== 0) {
      const req = Buffer.from(msg);
      return Promise.resolve(xfr(req, src)).then((msgs) => {
        if (msgs) for (const m of msgs) reply.send(frame(m));
        else { const r = answerer.handle(req, src, false, false) as Buffer | null; if (r) reply.send(r); }
      }, (err: unknown) => { o.log.error({ err }, 'dns zone transfer failed'); reply.close(); });
    }
    let r: Buffer | PendingAnswer | null;
    try {
      r = answerer.handle(msg, src, false, true);
    } catch (err) {
      o.log.error({ err }, 'dns answer failed');
      reply.close();
      return undefined;
    }
    if (isPending(r)) return later(r, Buffer.from(msg), src, false, t0, (b) => reply.send(b));
    if (r) reply.send(r);
    finish(t0, src, r !== null);
    return undefined;
  };
  const transport = createTcpTransport({ limits: { ...TCP_DEFAULTS, ...o.tcp }, metrics: o.metrics.tcp, onMessage: onTcpMessage });
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
  return {
    port,
    udpPath,
    close: async () => {
      transport.closeConnections();
      await new Promise<void>((r) => tcp.close(() => r()));
      await udp.close();
    },
  };
}
