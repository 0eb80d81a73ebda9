import type { Logger } from '../log/logger.js';
import { PASS, QUERY_KIND, type DeferredWork, type DnsStep, type QueryScope, type StepResult, type StreamReply } from './step.js';
import { RCODE, TYPE } from './wire-reply.js';

/** How a zone transfer writes its messages to the TCP connection. */
export interface TransferOutput {
  /** Queues one message (without the TCP length prefix; it is added here). */
  send(msg: Buffer): void;
  /** See StreamReply.drained: true once the backlog is small, false when the connection is gone or stalled. */
  drained(timeoutMs: number): Promise<boolean>;
}

/**
 * Answers an AXFR or IXFR request received over TCP by streaming its messages to `out`; resolves
 * true once it answered (or gave up on a connection that went away), false to decline: the
 * answer path then replies (REFUSED, or the TSIG error of a request that failed verification).
 */
export type TransferHandler = (req: Buffer, src: string, out: TransferOutput) => Promise<boolean>;

const frame = (b: Buffer) => { const h = Buffer.allocUnsafe(2); h.writeUInt16BE(b.length); return Buffer.concat([h, b]); };

/**
 * Zone transfers (docs/dns.md "Zone transfers"): an AXFR or IXFR query over TCP goes to the
 * transfer handler (zone-transfer.ts), which streams its messages on the connection; a request it
 * declines is answered REFUSED (signed when the request was). Over UDP, and over plain TCP with
 * `dns.axfr.tlsOnly`, the step passes (the refuse step answers REFUSED). A handler that fails closes the connection.
 */
export class TransferStep implements DnsStep {
  readonly name = 'transfer';
  readonly kinds = QUERY_KIND.Transfer;

  /** `tlsOnly` (`dns.axfr.tlsOnly`): a request over plain TCP passes too, and the refuse step answers REFUSED */
  constructor(private readonly handler: TransferHandler, private readonly log: Logger, private readonly tlsOnly = false) {}

  answer(x: QueryScope): StepResult {
    const stream = x.stream;
    const qt = x.q.qtype;
    if (!stream || (qt !== TYPE.AXFR && qt !== TYPE.IXFR) || (this.tlsOnly && !stream.encrypted)) return PASS;
    return x.defer(this.work(stream, x.src));
  }

  /** The deferred transfer of one request (not the hot path: a closure per transfer). */
  private work(stream: StreamReply, src: string): DeferredWork {
    const out: TransferOutput = { send: (m) => stream.send(frame(m)), drained: (ms) => stream.drained(ms) };
    return (req) => this.handler(req, src, out).then(
      (handled) => (handled ? undefined : RCODE.REFUSED),
      (err: unknown) => { this.log.error({ err }, 'dns zone transfer failed'); stream.close(); return undefined; },
    );
  }
}
