import { performance } from 'node:perf_hooks';
import type { PendingAnswer } from './answer.js';
import { BatchSocket } from './batch-socket.js';
import type { Dispatch } from './dispatch.js';
import type { UdpListener } from './udp-dgram.js';

/**
 * UDP through the batching addon (native/udp-batch): one callback per recvmmsg batch; each reply
 * is written straight into its send slot of the shared memory and all are sent with one sendmmsg
 * when the callback returns.
 */
export function batchedUdp(d: Dispatch, listenAddr: string): UdpListener {
  const { answerer, log } = d;
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
        log.error({ err }, 'dns answer failed');
        continue;
      }
      if (typeof r === 'number') {
        s.setReply(i, r);
        d.finish(t0, src, true);
      } else if (r === null) {
        d.finish(t0, src, false);
      } else if (Buffer.isBuffer(r)) {
        // Longer than a send slot: sent on its own.
        s.sendTo(r, s.sourceFamily(i), s.sourceBytes(i), s.sourcePort(i));
        d.finish(t0, src, true);
      } else {
        // The slot is reused by the next batch: keep copies of the request and the source.
        const family = s.sourceFamily(i);
        const addr = s.sourceBytes(i);
        const port = s.sourcePort(i);
        d.later(r, Buffer.from(req), src, true, t0, (b) => { s.sendTo(b, family, addr, port); })
          .catch((err: unknown) => log.error({ err }, 'dns answer failed'));
      }
    }
  };
  return {
    bind: (port) => {
      bs = BatchSocket.open(listenAddr, port, onBatch);
      return Promise.resolve(bs.port);
    },
    close: async () => {
      if (!bs) return;
      bs.close();
      // The descriptor is closed in libuv's close phase, after the next check phase at the latest.
      for (let k = 0; k < 10 && !bs.stats().closed; k++) await new Promise<void>((r) => setImmediate(r));
    },
  };
}
