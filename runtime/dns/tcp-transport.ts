import { createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { TLSSocket, type SecureContext } from 'node:tls';
import type { Config } from '../config/types.js';
import { parseDuration } from '../config/duration.js';
import type { DnsTcpMetrics } from './metrics.js';
import { TcpConnection, type TcpMessageHandler } from './tcp-connection.js';
import { TCP_DEFAULTS, TcpConnectionTable, sourceKey, type TcpLimits } from './tcp-table.js';

/** The TCP half of a DNS listener: the unlistened server and a way to drop every connection. */
export interface TcpTransport {
  server: Server;
  /** the connection bookkeeping (read-only use: sizes for tests and logs) */
  table: TcpConnectionTable<TcpConnection>;
  /** Destroys every open connection (the server itself is closed by its owner). */
  closeConnections(): void;
}

/** ALPN of DNS over TLS (RFC 7858; RFC 9103 §7.1 requires it for zone transfers over TLS). */
export const DOT_ALPN = 'dot';

/**
 * Creates the DNS-over-TCP server with its limits: per-source cap (refused at once), global cap
 * (the least recently active idle connection is evicted, or the new one refused when none is
 * idle), the message deadline and the idle timeout. Every complete message goes to `onMessage`.
 * Counts refusals, evictions, timeouts and open connections in `metrics`. Does not listen.
 * With `tls` it is the DNS-over-TLS server (docs/dns.md "Zone transfers over TLS"): a connection
 * is admitted (or refused) before its handshake, as a TCP one, then wrapped in TLS (ALPN "dot");
 * the handshake runs under the idle timeout, and one that fails closes the connection.
 */
export function createTcpTransport(o: { limits: TcpLimits; metrics: DnsTcpMetrics; onMessage: TcpMessageHandler; tls?: SecureContext }): TcpTransport {
  const table = new TcpConnectionTable<TcpConnection>(o.limits, () => performance.now());
  const ctx = { table, metrics: o.metrics, onMessage: o.onMessage };
  const sockets = new Set<Socket>();
  const server = createServer((sock) => {
    const src = sock.remoteAddress ?? '';
    const key = sourceKey(src);
    const verdict = table.admit(key);
    if (verdict.kind === 'refuse') {
      o.metrics.refused[verdict.reason]++;
      sock.destroy();
      return;
    }
    if (verdict.kind === 'evict') {
      o.metrics.evicted++;
      verdict.victim.value.close();
    }
    sockets.add(sock);
    sock.once('close', () => sockets.delete(sock));
    const secureContext = o.tls;
    const c = new TcpConnection(secureContext ? new TLSSocket(sock, { isServer: true, secureContext, ALPNProtocols: [DOT_ALPN] }) : sock, src, ctx);
    c.start(table.add(key, c));
    o.metrics.open = table.size;
  });
  return {
    server,
    table,
    closeConnections: () => { for (const s of sockets) s.destroy(); },
  };
}

/**
 * The listener limits from `dns.tcp` (schemas/config.v1.schema.json). A duration of 0 (or one
 * that does not parse) means the default: a listener without these deadlines is what a slow
 * client would wish for.
 */
export function tcpLimitsFromConfig(c: Config['dns']['tcp'] | undefined): TcpLimits {
  const ms = (v: string | undefined, dflt: number) => { const n = parseDuration(v); return n !== undefined && n > 0 ? n : dflt; };
  return {
    idleMs: ms(c?.idleTimeout, TCP_DEFAULTS.idleMs),
    messageMs: ms(c?.messageTimeout, TCP_DEFAULTS.messageMs),
    maxConnections: c?.maxConnections ?? TCP_DEFAULTS.maxConnections,
    maxPerSource: c?.maxConnectionsPerSource ?? TCP_DEFAULTS.maxPerSource,
  };
}
