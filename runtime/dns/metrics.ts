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

/**
 * Counters of the TCP listener's limits (docs/dns.md "TCP limits"), plain numbers the transport
 * bumps and prom-client reads at scrape time: `gslbd_dns_tcp_refused_total{reason}`,
 * `gslbd_dns_tcp_evicted_total`, `gslbd_dns_tcp_timeouts_total{kind}` and the gauge
 * `gslbd_dns_tcp_connections`. Every label value is exported from the start, at 0.
 */
export class DnsTcpMetrics {
  refused: Record<TcpRefusal, number> = { per_source: 0, global_full: 0 };
  timeouts: Record<TcpTimeoutKind, number> = { idle: 0, message: 0, write: 0 };
  evicted = 0;
  /** open connections, kept by the transport */
  open = 0;

  /** Registers the four metrics on the registry; values are read at scrape time. */
  register(registry: Registry): void {
    const metric = (name: string, help: string, type: 'counter' | 'gauge', values: () => { labels: Record<string, string>; value: number }[]) => ({
      name, help, type,
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => {},
    });
    const byLabel = <K extends string>(label: string, rec: Record<K, number>) => () =>
      (Object.keys(rec) as K[]).map((k) => ({ labels: { [label]: k }, value: rec[k] }));
    for (const m of [
      metric('gslbd_dns_tcp_refused_total', 'DNS TCP connections closed at once, by reason (per_source: the source is at dns.tcp.maxConnectionsPerSource; global_full: at dns.tcp.maxConnections with none idle)',
        'counter', byLabel('reason', this.refused)),
      metric('gslbd_dns_tcp_evicted_total', 'Idle DNS TCP connections closed to make room for a new one at dns.tcp.maxConnections', 'counter',
        () => [{ labels: {}, value: this.evicted }]),
      metric('gslbd_dns_tcp_timeouts_total', 'DNS TCP connections closed by a deadline, by kind (idle: dns.tcp.idleTimeout; message: a message not whole within dns.tcp.messageTimeout; write: an answer not read within it)',
        'counter', byLabel('kind', this.timeouts)),
      metric('gslbd_dns_tcp_connections', 'Open DNS TCP connections', 'gauge', () => [{ labels: {}, value: this.open }]),
    ]) registry.registerMetric(m as never);
  }
}

/** Outcomes of zone transfer requests (AXFR and IXFR, over TCP and UDP). */
export type TransferResult = 'ok' | 'refused' | 'notauth' | 'failed';

/**
 * DNS counters kept in preallocated typed arrays: `record` is a few array writes per query, and
 * prom-client only sees the numbers when /metrics is scraped (through each metric's `get`).
 * Metrics: `gslbd_dns_queries_total{type,rcode}`, `gslbd_dns_query_duration_seconds`,
 * `gslbd_dns_transfers_total{result}`, plus `tcp`.
 */
export class DnsMetrics {
  readonly counts = new Float64Array(TYPES.length * RCODES.length);
  readonly buckets = new Float64Array(BOUNDS.length + 1);
  sum = 0;
  count = 0;
  /** the TCP listener's limit counters, registered with the query metrics */
  readonly tcp = new DnsTcpMetrics();
  /**
   * `gslbd_dns_transfers_total{result}`: ok (the whole zone sent), refused (transfers off, over
   * UDP, unsigned while TSIG is required, not a served zone, a malformed request), notauth (a TSIG
   * that failed: BADKEY, BADSIG, BADTIME), failed (the connection went away or stopped reading).
   * The transfer handler counts ok and failed; `record` counts the refusals the answer path sends.
   */
  readonly transfers: Record<TransferResult, number> = { ok: 0, refused: 0, notauth: 0, failed: 0 };

  /** Counts one query (rcode -1 = dropped) and its handling time in seconds. */
  record(qtype: number, rcode: number, seconds: number): void {
    const ti = TYPE_INDEX.get(qtype) ?? OTHER_TYPE;
    this.counts[ti * RCODES.length + rcodeIndex(rcode)]! += 1;
    if ((qtype === 252 || qtype === 251) && rcode >= 0) this.transfers[rcode === 9 ? 'notauth' : 'refused']++;
    let i = 0;
    while (i < BOUNDS.length && seconds > BOUNDS[i]!) i++;
    this.buckets[i]! += 1;
    this.sum += seconds;
    this.count++;
  }

  /** Registers the query metrics and the TCP limit metrics on the registry; values are read at scrape time. */
  register(registry: Registry): void {
    const queries = {
      name: 'gslbd_dns_queries_total', help: 'DNS queries answered, by query type and response code', type: 'counter',
      get: async () => ({
        name: queries.name, help: queries.help, type: 'counter', aggregator: 'sum',
        values: TYPES.flatMap((t, ti) => RCODES.map((r, ri) => ({ labels: { type: t, rcode: r }, value: this.counts[ti * RCODES.length + ri]! })))
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
        BOUNDS.forEach((b, i) => { cum += this.buckets[i]!; values.push({ labels: { le: b }, value: cum, metricName: `${name}_bucket` }); });
        values.push({ labels: { le: '+Inf' }, value: this.count, metricName: `${name}_bucket` });
        values.push({ labels: {}, value: this.sum, metricName: `${name}_sum` });
        values.push({ labels: {}, value: this.count, metricName: `${name}_count` });
        return { name, help: duration.help, type: 'histogram', aggregator: 'sum', values };
      },
      reset: () => { this.buckets.fill(0); this.sum = 0; this.count = 0; },
    };
    const transfers = {
      name: 'gslbd_dns_transfers_total', help: 'Zone transfer requests (AXFR, IXFR) by result: ok, refused, notauth (TSIG failed), failed (connection lost or stalled)', type: 'counter',
      get: async () => ({
        name: transfers.name, help: transfers.help, type: 'counter', aggregator: 'sum',
        values: (Object.keys(this.transfers) as TransferResult[]).map((r) => ({ labels: { result: r }, value: this.transfers[r] })),
      }),
      reset: () => { for (const k of Object.keys(this.transfers) as TransferResult[]) this.transfers[k] = 0; },
    };
    registry.registerMetric(queries as never);
    registry.registerMetric(duration as never);
    registry.registerMetric(transfers as never);
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
