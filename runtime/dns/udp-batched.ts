import { performance } from 'node:perf_hooks';
import type { PendingAnswer } from './answer.js';
import { BatchSocket } from './batch-socket.js';
import type { Dispatch } from './dispatch.js';
import type { UdpListener } from './udp-dgram.js';

/** How a batched socket joins a SO_REUSEPORT group (docs/dns.md "Workers"). */
export interface BatchedUdpOptions {
  /**
   * 'first': the socket that creates the group; `bind` first binds the address without
   * SO_REUSEPORT (fails with EADDRINUSE when anything holds it, such as another gslbd's group),
   * closes that probe and binds again with SO_REUSEPORT. 'join': bind with SO_REUSEPORT at once
   * (a worker joining the group the first socket made). Unset: a plain socket.
   */
  reusePort?: 'first' | 'join';
  /**
   * Packets this thread does not answer itself (RFC 2136 UPDATE in a worker thread: the write
   * path lives on the main thread): given a copy of the request, its source text, and a `send`
   * for the reply. Returns false to answer the packet here after all.
   */
  forward?: (req: Buffer, src: string, send: (b: Buffer) => void) => boolean;
  /** Other packets than UPDATE that go to `forward` (a DNS worker: the catalog zone's queries) */
  forwards?: (req: Buffer) => boolean;
  /** dns.udpCoalesce in microseconds (0 or absent: off; docs/dns.md "Receive coalescing") */
  coalesceUs?: number;
}

const isUpdate = (req: Buffer) => req.length >= 12 && (req[2]! & 0x80) === 0 && ((req[2]! >> 3) & 0xf) === 5;

/**
 * UDP through the batching addon (native/udp-batch): one callback per recvmmsg batch; each reply
 * is written straight into its send slot of the shared memory and all are sent with one sendmmsg
 * when the callback returns.
 */
export function batchedUdp(d: Dispatch, listenAddr: string, opts: BatchedUdpOptions = {}): UdpListener {
  const { answerer, log } = d;
  let bs: BatchSocket | undefined;
  const forward = opts.forward;
  const forwards = opts.forwards;
  const maxAge = d.maxQueryAgeUs;
  const onBatch = (count: number) => {
    const s = bs!;
    const mem = s.mem;
    const max = s.txSlot;
    // One clock read per batch: every reply goes out with the batch's sendmmsg (Dispatch.count).
    const t0 = performance.now();
    d.batch();
    for (let i = 0; i < count; i++) {
      if (s.rxLength(i) < 0) continue;
      // Waited in the receive queue longer than its client waits (the event loop was blocked):
      // dropped unanswered, so the fresh queries behind it are answered sooner (dns.maxQueryAge).
      if (maxAge > 0 && s.queueAgeUs(i) > maxAge) { d.stale(s.request(i)); continue; }
      const src = s.source(i);
      const req = s.request(i);
      if (forward && (isUpdate(req) || (forwards !== undefined && forwards(req)))) {
        const family = s.sourceFamily(i);
        const addr = s.sourceBytes(i);
        const port = s.sourcePort(i);
        if (forward(Buffer.from(req), src, (b) => { s.sendTo(b, family, addr, port); })) continue;
      }
      let r: number | Buffer | PendingAnswer | null;
      try {
        r = answerer.handleInto(req, src, true, mem, s.txOffset(i), max);
      } catch (err) {
        log.error({ err }, 'dns answer failed');
        continue;
      }
      if (typeof r === 'number') {
        s.setReply(i, r);
        d.count(t0, src, true);
      } else if (r === null) {
        d.count(t0, src, false);
      } else if (Buffer.isBuffer(r)) {
        // Longer than a send slot: sent on its own.
        s.sendTo(r, s.sourceFamily(i), s.sourceBytes(i), s.sourcePort(i));
        d.count(t0, src, true);
      } else {
        // The slot is reused by the next batch: keep copies of the request and the source.
        const family = s.sourceFamily(i);
        const addr = s.sourceBytes(i);
        const port = s.sourcePort(i);
        d.later(r, Buffer.from(req), src, true, t0, (b) => { s.sendTo(b, family, addr, port); })
          .catch((err: unknown) => log.error({ err }, 'dns answer failed'));
      }
    }
    d.endBatch(t0);
  };
  return {
    bind: async (port) => {
      let p = port;
      if (opts.reusePort === 'first') {
        // Without SO_REUSEPORT the probe fails with EADDRINUSE while any socket holds the address,
        // so a second daemon cannot silently join this one's group (docs/dns.md "Workers").
        const probe = BatchSocket.open(listenAddr, port, () => {});
        p = probe.port;
        await closeSocket(probe);
      }
      bs = BatchSocket.open(listenAddr, p, onBatch, { reusePort: opts.reusePort !== undefined, coalesceUs: opts.coalesceUs ?? 0 });
      return bs.port;
    },
    close: async () => {
      if (bs) await closeSocket(bs);
    },
  };
}

/** Closes a batch socket and waits until its descriptor is closed. */
async function closeSocket(s: BatchSocket): Promise<void> {
  s.close();
  // The descriptor is closed in libuv's close phase, after the next check phase at the latest.
  for (let k = 0; k < 10 && !s.stats().closed; k++) await new Promise<void>((r) => setImmediate(r));
}
