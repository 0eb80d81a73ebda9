import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { PendingAnswer } from './answer.js';
import { isPending, type Dispatch } from './dispatch.js';

/** The UDP half of a listener, whichever path carries it. */
export interface UdpListener { bind(port: number): Promise<number>; close(): Promise<void> }

function identityLookup(address: string, _opts: unknown, cb: (err: Error | null, address: string, family: number) => void): void {
  cb(null, address, isIP(address));
}

/** Sends a UDP reply; a source port 0 (spoofed or broken) throws synchronously in dgram, so it is skipped. */
function sendTo(sock: UdpSocket, b: Buffer, port: number, address: string): void {
  if (port === 0) return;
  try { sock.send(b, port, address); } catch { /* unreachable peer: nothing to answer */ }
}

/** UDP through Node's dgram socket: one 'message' event per query. */
export function dgramUdp(d: Dispatch, listenAddr: string): UdpListener {
  const { answerer, log } = d;
  // Replies go to the literal address a query came from: an identity lookup skips dns.lookup and
  // the extra tick it costs on every send.
  const sock = createSocket({ type: isIP(listenAddr) === 6 ? 'udp6' : 'udp4', recvBufferSize: 8 << 20, sendBufferSize: 8 << 20, lookup: identityLookup as never });
  sock.on('error', (err) => log.error({ err }, 'dns udp socket error'));
  sock.on('message', (msg, rinfo) => {
    const t0 = performance.now();
    let r: Buffer | PendingAnswer | null;
    try {
      r = answerer.handle(msg, rinfo.address, true, true);
    } catch (err) {
      log.error({ err }, 'dns answer failed');
      return;
    }
    if (isPending(r)) {
      // A failed deferred answer is logged like a failed direct one: an unhandled rejection would
      // end the daemon.
      d.later(r, msg, rinfo.address, true, t0, (b) => sendTo(sock, b, rinfo.port, rinfo.address))
        .catch((err: unknown) => log.error({ err }, 'dns answer failed'));
      return;
    }
    if (r) sendTo(sock, r, rinfo.port, rinfo.address);
    d.finish(t0, rinfo.address, r !== null);
  });
  return {
    bind: (port) => new Promise<number>((resolve, reject) => {
      sock.once('error', reject);
      sock.bind(port, listenAddr, () => { sock.off('error', reject); resolve(sock.address().port); });
    }),
    close: () => new Promise<void>((r) => { try { sock.close(() => r()); } catch { r(); } }),
  };
}
