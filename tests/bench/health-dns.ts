/**
 * The DNS side of `npm run bench:health -- --dns-qps N`: gslbd's DNS server (the answer path and
 * the batched UDP socket of runtime/dns) in the bench's own process, on the thread that runs the
 * health checks, as in the daemon, answering one service over a pool of the probed members from
 * the checker's live HealthView; and dnsperf at a steady rate against it.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { validateConfigObject } from '../../runtime/config/load.js';
import { NO_RUM } from '../../runtime/balancer/types.js';
import { Answerer } from '../../runtime/dns/answer.js';
import { DnsMetrics } from '../../runtime/dns/metrics.js';
import { startDnsServer } from '../../runtime/dns/server.js';
import type { HealthView } from '../../runtime/ports/health-view.js';
import type { MemberRow, Row, ServiceRow } from '../../core/model/types.js';
import { emptySnapshot, nextSnapshot } from '../../core/snapshot/snapshot.js';
import { runDnsperf, type PerfResult } from './dnsperf.js';

const meta = { origin: 'api' as const, revision: 'r', tenantId: 'default' };

/** Starts the server on 127.0.0.1 (a free port): `www.bench.test` answers from `ips`, members of pool `poolId`. */
export async function startBenchDns(view: HealthView, poolId: string, ips: string[]): Promise<{ port: number; close: () => Promise<void> }> {
  const cfg = validateConfigObject({ dns: { domain: 'bench.test' } });
  const rows: Row[] = [
    { kind: 'pool', id: poolId, name: poolId, ...meta } as Row,
    ...ips.map((ip, i): MemberRow => ({ kind: 'member', id: `m${i}`, poolId, ipAddress: ip, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta })),
    { kind: 'service', id: 's', name: 'www', domain: 'www.bench.test.', algorithm: 'round-robin', ttl: 30, poolId, chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta } as ServiceRow,
  ];
  const snapshot = nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row })), 'r', Date.now());
  const a = new Answerer({ config: cfg, health: view, snapshot: () => snapshot, serial: () => 1, geo: { city: undefined, asn: undefined, endpointLocations: {} }, rum: NO_RUM, rand: Math.random });
  a.index();
  const server = await startDnsServer(a, { listenAddr: '127.0.0.1', port: 0, deadlineMs: 200, queryLog: false, log: pino({ level: 'silent' }), metrics: new DnsMetrics(), maxQueryAgeMs: 1000, udpCoalesceUs: 250 });
  return { port: server.port, close: () => server.close() };
}

/** dnsperf at `qps` for `seconds` against `port` (pinned to `cpu` when given), asking for the bench's service. */
export function steadyDnsperf(port: number, qps: number, seconds: number, cpu?: number): Promise<PerfResult> {
  const file = join(tmpdir(), `gslbd-health-dns-${process.pid}.txt`);
  writeFileSync(file, 'www.bench.test A\n');
  const wrap = cpu === undefined ? undefined : (cmd: string[]) => ['taskset', '-c', String(cpu), ...cmd];
  return runDnsperf(port, file, ['-Q', String(qps), '-l', String(seconds), '-q', '64'], { verbose: true, killAfterSeconds: seconds + 10, ...(wrap ? { wrap } : {}) });
}

/** `lost of sent (%), avg / p99 / max ms` of a dnsperf run. */
export function perfText(r: PerfResult): string {
  const f = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(2));
  return `lost ${r.lost} of ${r.sent} (${((100 * r.lost) / Math.max(1, r.sent)).toFixed(2)} %), latency avg / p99 / max ${f(r.avgMs)} / ${f(r.p99Ms)} / ${f(r.maxMs)} ms`;
}
