import { performance } from 'node:perf_hooks';
import type { Logger } from '../log/logger.js';
import type { Answerer, PendingAnswer } from './answer.js';
import { rcodeName, typeName, type DnsMetrics } from './metrics.js';
import { questionType } from './wire-query.js';

/** What every transport shares: the answerer, metrics, the query log and the lookup deadline. */
export interface Dispatch {
  answerer: Answerer;
  log: Logger;
  /** records a handled query (metrics, and the query log when on and a reply went out) */
  finish: (t0: number, src: string, replied: boolean) => void;
  /**
   * `finish` for a query of a batch (the batched UDP path) without reading the clock: the query
   * is counted now, and `endBatch` gives every query counted since the batch's time, one clock
   * read per batch. A query-log line still reads the clock for its own `duration_us`.
   */
  count: (t0: number, src: string, replied: boolean) => void;
  /** Ends a batch that started at `t0`: its queries are observed in the duration histogram with the batch's time. */
  endBatch: (t0: number) => void;
  /**
   * A lookup that may wait: races the database against the deadline, then answers without
   * waiting and sends through `send`; an UPDATE or a zone transfer (`p.finish`) is sent when it is done. Settles once
   * the reply is sent (TCP counts the connection busy until then).
   */
  later: (p: PendingAnswer, req: Buffer, src: string, udp: boolean, t0: number, send: (b: Buffer) => void) => Promise<void>;
  /**
   * dns.maxQueryAge in microseconds (0: off): a UDP query that waited longer in the receive queue
   * is dropped unanswered (docs/dns.md "Stale queries")
   */
  maxQueryAgeUs: number;
  /** counts one read of the batched UDP socket (`gslbd_dns_udp_batches_total`) */
  batch: () => void;
  /** counts a query dropped for its age (`gslbd_dns_queries_total{rcode="dropped"}`, by its type) */
  stale: (req: Buffer) => void;
}

export interface DispatchOptions {
  /** deadline for an answer that waits for a lookup (ms); past it the reply is SERVFAIL */
  deadlineMs: number;
  queryLog: boolean;
  log: Logger;
  metrics: DnsMetrics;
  /** dns.maxQueryAge in ms; 0 or absent: every query is answered however long it waited */
  maxQueryAgeMs?: number;
}

export const isPending = (r: Buffer | PendingAnswer | null): r is PendingAnswer => r !== null && !Buffer.isBuffer(r);

export function createDispatch(answerer: Answerer, o: DispatchOptions): Dispatch {
  const logQuery = (src: string, secs: number) => {
    const ecs = answerer.lastEcs();
    o.log.info({
      name: answerer.lastName, type: typeName(answerer.lastQtype), src, ...(ecs ? { ecs } : {}), rcode: rcodeName(answerer.lastRcode),
      answers: answerer.lastAnswers.map((c) => c.ip), duration_us: Math.round(secs * 1e6),
    }, 'dns query');
  };
  const finish = (t0: number, src: string, replied: boolean) => {
    const secs = (performance.now() - t0) / 1000;
    o.metrics.record(answerer.lastQtype, answerer.lastRcode, secs);
    if (o.queryLog && replied) logQuery(src, secs);
  };
  let inBatch = 0;
  const count = (t0: number, src: string, replied: boolean) => {
    o.metrics.countQuery(answerer.lastQtype, answerer.lastRcode);
    inBatch++;
    if (o.queryLog && replied) logQuery(src, (performance.now() - t0) / 1000);
  };
  const endBatch = (t0: number) => {
    if (inBatch === 0) return;
    o.metrics.observe((performance.now() - t0) / 1000, inBatch);
    inBatch = 0;
  };
  const later: Dispatch['later'] = (p, req, src, udp, t0, send) => {
    // an UPDATE or a transfer: no deadline (the change may be under way), the reply once it is done
    const { finish: done } = p;
    if (done) {
      return p.wait.then(() => {
        const r = done();
        if (r === undefined) return; // answered by the step itself (a zone transfer streamed its messages)
        if (r) send(r);
        finish(t0, src, r !== null);
      });
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((r) => { timer = setTimeout(r, o.deadlineMs); });
    return Promise.race([p.wait, deadline]).then(() => {
      clearTimeout(timer);
      const r = answerer.handle(req, src, udp, false) as Buffer | null;
      if (r) send(r);
      finish(t0, src, r !== null);
    });
  };
  // counted as dropped, not timed: a query never answered has no place in the duration histogram
  const stale = (req: Buffer) => { o.metrics.countQuery(questionType(req), -1); };
  const batch = () => { o.metrics.batch(); };
  return { answerer, log: o.log, finish, count, endBatch, later, maxQueryAgeUs: (o.maxQueryAgeMs ?? 0) * 1000, stale, batch };
}
