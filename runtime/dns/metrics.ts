import type { Registry } from 'prom-client';
import type { TcpRefusal, TcpTimeoutKind } from './tcp-table.js';

/** Query types counted by name; everything else is `other`. */
const TYPES = ['A', 'AAAA', 'SOA', 'NS', 'ANY', 'AXFR', 'IXFR', 'other'] as const;
const TYPE_INDEX = new Map<number, number>([[1, 0], [28, 1], [6, 2], [2, 3], [255, 4], [252, 5], [251, 6]]);
const OTHER_TYPE = TYPES.length - 1;
/** Response codes counted by name (index = rcode for 0..5), plus NOTAUTH, BADVERS and `dropped`. */
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'NOTAUTH', 'BADVERS', 'dropped', 'other'] as const;
/** Histogram bucket bounds in seconds. */
const BOUNDS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

function rcodeIndex(rcode: number): number {
  if (rcode >= 0 && rcode <= 5) return rcode;
  if (rcode === 9) return 6;
  if (rcode === 16) return 7;
  if (rcode === -1) return 8;
  return 9;
}
const DROPPED_I = rcodeIndex(-1);
const SERVFAIL_I = rcodeIndex(2);

/**
 * Counters of the TCP listener's limits (docs/dns.md "TCP limits"), plain numbers the transport
 * bumps and prom-client reads at scrape time: `gslbd_dns_tcp_refused_total{reason}`,
 * `gslbd_dns_tcp_evicted_total`, `gslbd_dns_tcp_timeouts_total{kind}` and the gauge
 * `gslbd_dns_tcp_connections`. Every label value is exported from the start, at 0. The
 * DNS-over-TLS listener has the same four as `gslbd_dns_tls_*` (`proto` 'tls').
 */
export class DnsTcpMetrics {
  refused: Record<TcpRefusal, number> = { per_source: 0, global_full: 0 };
  timeouts: Record<TcpTimeoutKind, number> = { idle: 0, message: 0, write: 0 };
  evicted = 0;
  /** open connections, kept by the transport */
  open = 0;

  constructor(private readonly proto: 'tcp' | 'tls' = 'tcp') {}

  /** Registers the four metrics on the registry; values are read at scrape time. */
  register(registry: Registry): void {
    const p = this.proto;
    const P = p.toUpperCase();
    const metric = (name: string, help: string, type: 'counter' | 'gauge', values: () => { labels: Record<string, string>; value: number }[]) => ({
      name, help, type,
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => {},
    });
    const byLabel = <K extends string>(label: string, rec: Record<K, number>) => () =>
      (Object.keys(rec) as K[]).map((k) => ({ labels: { [label]: k }, value: rec[k] }));
    for (const m of [
      metric(`gslbd_dns_${p}_refused_total`, `DNS ${P} connections closed at once, by reason (per_source: the source is at dns.tcp.maxConnectionsPerSource; global_full: at dns.tcp.maxConnections with none idle)`,
        'counter', byLabel('reason', this.refused)),
      metric(`gslbd_dns_${p}_evicted_total`, `Idle DNS ${P} connections closed to make room for a new one at dns.tcp.maxConnections`, 'counter',
        () => [{ labels: {}, value: this.evicted }]),
      metric(`gslbd_dns_${p}_timeouts_total`, `DNS ${P} connections closed by a deadline, by kind (idle: dns.tcp.idleTimeout; message: a message not whole within dns.tcp.messageTimeout; write: an answer not read within it)`,
        'counter', byLabel('kind', this.timeouts)),
      metric(`gslbd_dns_${p}_connections`, `Open DNS ${P} connections`, 'gauge', () => [{ labels: {}, value: this.open }]),
    ]) registry.registerMetric(m as never);
  }
}

/** Outcomes of zone transfer requests (AXFR and IXFR, over TCP and UDP). */
export type TransferResult = 'ok' | 'refused' | 'notauth' | 'failed';

/** Layout of the counter cells: per type×rcode counts, histogram buckets, sum, count, transfer refusals. */
const COUNTS = TYPES.length * RCODES.length;
const BUCKETS_AT = COUNTS;
const SUM_AT = BUCKETS_AT + BOUNDS.length + 1;
const COUNT_AT = SUM_AT + 1;
const REFUSED_AT = COUNT_AT + 1;
const NOTAUTH_AT = REFUSED_AT + 1;
const BATCHES_AT = NOTAUTH_AT + 1;
/** Bytes of the cells of one DnsMetrics (the SharedArrayBuffer a DNS worker counts into). */
export const DNS_METRICS_BYTES = (BATCHES_AT + 1) * 8;

/**
 * DNS counters kept in preallocated typed arrays: `record` is a few array writes per query, and
 * prom-client only sees the numbers when /metrics is scraped (through each metric's `get`).
 * Metrics: `gslbd_dns_queries_total{type,rcode}`, `gslbd_dns_query_duration_seconds`,
 * `gslbd_dns_transfers_total{result}`, `gslbd_dns_notify_total{result}`, `gslbd_dns_worker_queries_total{worker}`,
 * `gslbd_dns_udp_batches_total`, plus `tcp`.
 * A DNS worker thread counts into cells in a SharedArrayBuffer (`new DnsMetrics(sab)`); the main
 * thread's registry sums its own cells and every worker's (`addWorker`) at scrape time, so no
 * message is sent per query or per scrape (docs/dns.md "Workers").
 */
export class DnsMetrics {
  readonly cells: Float64Array;
  readonly counts: Float64Array;
  readonly buckets: Float64Array;
  /** the TCP listener's limit counters, registered with the query metrics */
  readonly tcp = new DnsTcpMetrics();
  /** the DNS-over-TLS listener's (`dns.tls`), registered only when it runs */
  readonly tls = new DnsTcpMetrics('tls');
  /**
   * `gslbd_dns_transfers_total{result}`: ok (the whole zone sent), refused (transfers off, over
   * UDP, unsigned while TSIG is required, not a served zone, a malformed request), notauth (a TSIG
   * that failed: BADKEY, BADSIG, BADTIME), failed (the connection went away or stopped reading).
   * The transfer handler counts ok and failed; `record` counts the refusals the answer path sends
   * (in the cells, so a worker's UDP refusals are counted too).
   */
  readonly transfers: Record<TransferResult, number> = { ok: 0, refused: 0, notauth: 0, failed: 0 };
  /**
   * `gslbd_dns_notify_total{result}` (notifier.ts, main thread only): answered (a secondary said
   * NOERROR), retried (a NOTIFY sent again after its wait), failed (unanswered after the last try,
   * or answered with an error).
   */
  readonly notify: Record<'answered' | 'failed' | 'retried', number> = { answered: 0, failed: 0, retried: 0 };
  /** `gslbd_dns_worker_resyncs_total`: times a DNS worker thread could not take an index image and was sent the whole image again */
  resyncs = 0;
  /** the cells of worker threads (index 1…), read at scrape time */
  private readonly workers: Float64Array[] = [];

  /** `shared`: count into this buffer (DNS_METRICS_BYTES long) instead of a private one. */
  constructor(shared?: SharedArrayBuffer) {
    this.cells = shared ? new Float64Array(shared) : new Float64Array(DNS_METRICS_BYTES / 8);
    this.counts = this.cells.subarray(0, COUNTS);
    this.buckets = this.cells.subarray(BUCKETS_AT, SUM_AT);
  }

  get sum(): number { return this.cells[SUM_AT]!; }
  get count(): number { return this.cells[COUNT_AT]!; }

  /** Adds a worker thread's cells (a SharedArrayBuffer it counts into) to what is exported. */
  addWorker(shared: SharedArrayBuffer): void {
    this.workers.push(new Float64Array(shared));
  }

  /** Counts one query (rcode -1 = dropped) and its handling time in seconds. */
  record(qtype: number, rcode: number, seconds: number): void {
    this.countQuery(qtype, rcode);
    this.observe(seconds, 1);
  }

  /** Counts one read of the batched UDP socket that found packets (one call into the answer path). */
  batch(): void {
    this.cells[BATCHES_AT]! += 1;
  }

  /** Counts one query by type and rcode (-1 = dropped), without its time (see `observe`). */
  countQuery(qtype: number, rcode: number): void {
    const c = this.cells;
    const ti = TYPE_INDEX.get(qtype) ?? OTHER_TYPE;
    c[ti * RCODES.length + rcodeIndex(rcode)]! += 1;
    if ((qtype === 252 || qtype === 251) && rcode >= 0) c[rcode === 9 ? NOTAUTH_AT : REFUSED_AT]! += 1;
  }

  /** Adds `n` observations of `seconds` to the duration histogram (a batch's queries share its time). */
  observe(seconds: number, n: number): void {
    const c = this.cells;
    let i = 0;
    while (i < BOUNDS.length && seconds > BOUNDS[i]!) i++;
    c[BUCKETS_AT + i]! += n;
    c[SUM_AT]! += seconds * n;
    c[COUNT_AT]! += n;
  }

  /** Cell `i` summed over this thread and every worker. */
  private total(i: number): number {
    let v = this.cells[i]!;
    for (const w of this.workers) v += w[i]!;
    return v;
  }

  /**
   * Queries answered (not dropped) and SERVFAIL answers so far, over every thread: what the GitOps
   * controller watches after an apply (gitops/watch/signals.ts).
   */
  answerTotals(): { queries: number; servfail: number } {
    let queries = 0;
    let servfail = 0;
    for (let ti = 0; ti < TYPES.length; ti++) {
      for (let ri = 0; ri < RCODES.length; ri++) {
        if (ri === DROPPED_I) continue;
        const v = this.total(ti * RCODES.length + ri);
        queries += v;
        if (ri === SERVFAIL_I) servfail += v;
      }
    }
    return { queries, servfail };
  }

  /** Queries each answerer counted (answered or dropped): index 0 is the main thread, 1… the worker threads. */
  perWorker(): number[] {
    return [this.cells, ...this.workers].map((c) => { let n = 0; for (let i = 0; i < COUNTS; i++) n += c[i]!; return n; });
  }

  /** Registers the query metrics and the TCP limit metrics on the registry; values are read at scrape time. */
  register(registry: Registry): void {
    const queries = {
      name: 'gslbd_dns_queries_total', help: 'DNS queries answered, by query type and response code', type: 'counter',
      get: async () => ({
        name: queries.name, help: queries.help, type: 'counter', aggregator: 'sum',
        values: TYPES.flatMap((t, ti) => RCODES.map((r, ri) => ({ labels: { type: t, rcode: r }, value: this.total(ti * RCODES.length + ri) })))
          .filter((v) => v.value > 0),
      }),
      reset: () => this.counts.fill(0),
    };
    const name = 'gslbd_dns_query_duration_seconds';
    const duration = {
      name, help: 'Time from packet received to reply sent, seconds', type: 'histogram',
      get: async () => {
        let cum = 0;
        const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
        BOUNDS.forEach((b, i) => { cum += this.total(BUCKETS_AT + i); values.push({ labels: { le: b }, value: cum, metricName: `${name}_bucket` }); });
        const count = this.total(COUNT_AT);
        values.push({ labels: { le: '+Inf' }, value: count, metricName: `${name}_bucket` });
        values.push({ labels: {}, value: this.total(SUM_AT), metricName: `${name}_sum` });
        values.push({ labels: {}, value: count, metricName: `${name}_count` });
        return { name, help: duration.help, type: 'histogram', aggregator: 'sum', values };
      },
      reset: () => { this.cells.fill(0, BUCKETS_AT, REFUSED_AT); },
    };
    const transfers = {
      name: 'gslbd_dns_transfers_total', help: 'Zone transfer requests (AXFR, IXFR) by result: ok, refused, notauth (TSIG failed), failed (connection lost or stalled)', type: 'counter',
      get: async () => ({
        name: transfers.name, help: transfers.help, type: 'counter', aggregator: 'sum',
        values: (Object.keys(this.transfers) as TransferResult[]).map((r) => ({
          labels: { result: r },
          value: this.transfers[r] + (r === 'refused' ? this.total(REFUSED_AT) : r === 'notauth' ? this.total(NOTAUTH_AT) : 0),
        })),
      }),
      reset: () => { for (const k of Object.keys(this.transfers) as TransferResult[]) this.transfers[k] = 0; this.cells[REFUSED_AT] = 0; this.cells[NOTAUTH_AT] = 0; },
    };
    const notify = {
      name: 'gslbd_dns_notify_total', help: 'NOTIFY messages to secondaries (dns.axfr.notify) by result: answered, retried (sent again), failed (unanswered after the last try, or an error answer)', type: 'counter',
      get: async () => ({
        name: notify.name, help: notify.help, type: 'counter', aggregator: 'sum',
        values: (Object.keys(this.notify) as (keyof DnsMetrics['notify'])[]).map((r) => ({ labels: { result: r }, value: this.notify[r] })),
      }),
      reset: () => { for (const k of Object.keys(this.notify) as (keyof DnsMetrics['notify'])[]) this.notify[k] = 0; },
    };
    const perWorker = {
      name: 'gslbd_dns_worker_queries_total', help: 'DNS queries handled per answering thread (worker 0: the main thread; 1…: DNS worker threads, dns.workers)', type: 'counter',
      get: async () => ({
        name: perWorker.name, help: perWorker.help, type: 'counter', aggregator: 'sum',
        values: this.perWorker().map((value, i) => ({ labels: { worker: String(i) }, value })),
      }),
      reset: () => {},
    };
    const resyncs = {
      name: 'gslbd_dns_worker_resyncs_total', help: 'Times a DNS worker thread could not take an index image and was sent the whole image again', type: 'counter',
      get: async () => ({ name: resyncs.name, help: resyncs.help, type: 'counter', aggregator: 'sum', values: [{ labels: {}, value: this.resyncs }] }),
      reset: () => { this.resyncs = 0; },
    };
    const batches = {
      name: 'gslbd_dns_udp_batches_total',
      help: 'Reads of the batched UDP sockets that found packets, each answered in one call; UDP queries divided by this is the mean batch size (dns.udpCoalesce)',
      type: 'counter',
      get: async () => ({ name: batches.name, help: batches.help, type: 'counter', aggregator: 'sum', values: [{ labels: {}, value: this.total(BATCHES_AT) }] }),
      reset: () => { this.cells[BATCHES_AT] = 0; },
    };
    registry.registerMetric(batches as never);
    registry.registerMetric(resyncs as never);
    registry.registerMetric(queries as never);
    registry.registerMetric(duration as never);
    registry.registerMetric(transfers as never);
    registry.registerMetric(notify as never);
    registry.registerMetric(perWorker as never);
    this.tcp.register(registry);
  }
}

/** Name of a query type for logs (`A`, `AAAA`, `TYPE65`). */
export function typeName(qtype: number): string {
  switch (qtype) {
    case 1: return 'A';
    case 2: return 'NS';
    case 6: return 'SOA';
    case 28: return 'AAAA';
    case 255: return 'ANY';
    case 252: return 'AXFR';
    case 251: return 'IXFR';
    case 16: return 'TXT';
    default: return `TYPE${qtype}`;
  }
}

/** Name of a response code for logs. */
export function rcodeName(rcode: number): string {
  return RCODES[rcodeIndex(rcode)]!;
}
