import { performance } from 'node:perf_hooks';
import type { PendingAnswer } from './answer.js';
import { isPending, type Dispatch } from './dispatch.js';
import type { TcpMessageHandler } from './tcp-connection.js';
import { DecodeStatus, ParsedQuery, decodeQuery } from './wire-query.js';

/** How a zone transfer writes its messages to the TCP connection. */
export interface TransferOutput {
  /** Queues one message (without the TCP length prefix; it is added here). */
  send(msg: Buffer): void;
  /** See TcpReply.drained: true once the backlog is small, false when the connection is gone or stalled. */
  drained(timeoutMs: number): Promise<boolean>;
}

/**
 * Answers an AXFR or IXFR request received over TCP by streaming its messages to `out`; resolves
 * true once it answered (or gave up on a connection that went away), false to decline: the
 * answer path then replies (REFUSED, or the TSIG error of a request that failed verification).
 */
export type TransferHandler = (req: Buffer, src: string, out: TransferOutput) => Promise<boolean>;

const transferProbe = new ParsedQuery();

/** The query type of a request when it is a well-formed AXFR or IXFR query, else 0. */
function transferType(msg: Buffer): number {
  const q = transferProbe;
  if (decodeQuery(msg, q) !== DecodeStatus.Ok) return 0;
  return q.qtype === 252 || q.qtype === 251 ? q.qtype : 0;
}

const frame = (b: Buffer) => { const h = Buffer.allocUnsafe(2); h.writeUInt16BE(b.length); return Buffer.concat([h, b]); };

/**
 * One complete TCP message: a zone transfer goes to the transfer handler (read per message, so a
 * part may install it later), anything else to the answerer (its TCP replies carry the length
 * prefix already).
 */
export function tcpMessageHandler(d: Dispatch, transfer: (() => TransferHandler | undefined) | undefined): TcpMessageHandler {
  const { answerer, log } = d;
  return (msg, src, reply) => {
    const t0 = performance.now();
    const xfr = transfer?.();
    if (xfr && transferType(msg) !== 0) {
      const req = Buffer.from(msg);
      const out: TransferOutput = { send: (m) => reply.send(frame(m)), drained: (ms) => reply.drained(ms) };
      return xfr(req, src, out).then((handled) => {
        if (handled) return;
        // Declined: the answer path replies and counts it (REFUSED, or a TSIG error).
        const r = answerer.handle(req, src, false, false) as Buffer | null;
        if (r) reply.send(r);
        d.finish(t0, src, r !== null);
      }, (err: unknown) => { log.error({ err }, 'dns zone transfer failed'); reply.close(); });
    }
    let r: Buffer | PendingAnswer | null;
    try {
      r = answerer.handle(msg, src, false, true);
    } catch (err) {
      log.error({ err }, 'dns answer failed');
      reply.close();
      return undefined;
    }
    if (isPending(r)) return d.later(r, Buffer.from(msg), src, false, t0, (b) => reply.send(b));
    if (r) reply.send(r);
    d.finish(t0, src, r !== null);
    return undefined;
  };
}
