import { performance } from 'node:perf_hooks';
import { isPending, type Dispatch } from './dispatch.js';
import type { PendingAnswer } from './step.js';
import type { TcpMessageHandler } from './tcp-connection.js';

/**
 * One complete TCP message, through the answerer (its TCP replies carry the length prefix
 * already), which is handed the connection: the transfer step (step-transfer.ts) streams a zone
 * transfer on it.
 */
export function tcpMessageHandler(d: Dispatch): TcpMessageHandler {
  const { answerer, log } = d;
  return (msg, src, reply) => {
    const t0 = performance.now();
    let r: Buffer | PendingAnswer | null;
    try {
      r = answerer.handle(msg, src, false, true, undefined, reply);
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
