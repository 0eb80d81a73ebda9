/**
 * `npm run bench:ixfr`: the size of an incremental transfer against the whole zone. Starts gslbd
 * in this process (every part; DNS on a free loopback port, transfers on with one operator key),
 * writes BENCH_IXFR_NAMES services (default 100,000; one A and one AAAA each) as one plan, then
 * makes two small changes through the core's apply path, each its own plan and serial:
 * (1) one TXT record added; (2) one service's TTL changed (its A and AAAA deleted and added with
 * the new TTL). For each, `kdig IXFR=<serial before>` (signed) against `kdig AXFR` of the same
 * zone: bytes, records, messages and wall time, and how long the apply of the change took with the
 * journal's work in its transaction (`BENCH_IXFR_JOURNAL=0`: no journal, for comparison). Loopback
 * only; bounded in time.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { validateConfigObject } from '../../runtime/config/load.js';
import { startDaemon } from '../../runtime/daemon.js';
import { planCreateAll, planUpdate } from '../../core/plan/delta.js';
import { getRow } from '../../core/snapshot/snapshot.js';
import type { Row, ServiceRow } from '../../core/model/types.js';
import '../../runtime/parts-all.js';

const run = promisify(execFile);
const NAMES = Number(process.env.BENCH_IXFR_NAMES ?? 100_000);
const SECRET = Buffer.from('gslbd-bench-ixfr-hmac-sha256-key').toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-ixfr-'));

const config = validateConfigObject({
  node: { id: 'bench' },
  database: { path: join(dir, 'gslbd.db') },
  api: { enabled: false },
  dns: {
    listenAddr: '127.0.0.1', port: 1, workers: 0, domain: 'bench.test', nsNames: ['ns1.bench.test'],
    axfr: { enabled: true, requireTsig: true, journalSize: Number(process.env.BENCH_IXFR_JOURNAL ?? 100), tsigKeys: [{ name: 'bench-key', algorithm: 'hmac-sha256', secret: SECRET, tenant: 'system' }] },
  },
  logging: { format: 'json', level: 'warn' },
});
config.dns.port = 0;

interface Xfr { ms: number; bytes: number; messages: number; records: number }

async function kdig(port: number, type: string): Promise<Xfr> {
  const t0 = performance.now();
  const { stdout } = await run('kdig', ['@127.0.0.1', '-p', String(port), '+time=60', '+retry=0', '-y', `hmac-sha256:bench-key:${SECRET}`, 'bench.test', type], { maxBuffer: 1024 * 1024 * 1024, timeout: 120_000 });
  const ms = performance.now() - t0;
  const m = /Received (\d+) B \((\d+) messages, (\d+) records\)/.exec(stdout);
  if (!m) throw new Error(`kdig ${type}: no summary\n${stdout.slice(-2000)}`);
  return { ms, bytes: Number(m[1]), messages: Number(m[2]), records: Number(m[3]) };
}

const fmt = (x: Xfr) => `${x.bytes.toLocaleString('en')} bytes, ${x.records.toLocaleString('en')} records, ${x.messages} messages, ${x.ms.toFixed(0)} ms`;

async function main() {
  const daemon = await startDaemon(config, { log: pino({ level: 'warn' }), env: {} });
  try {
    const core = daemon.core;
    const port = daemon.ports.dnsPort as number;
    const serial = () => (daemon.ports.dnsSerial as () => number)();
    const meta = { origin: 'api' as const, revision: 'api:bench', tenantId: 'default' };
    const rows: Row[] = [
      { kind: 'pool', id: 'p', name: 'p', ...meta },
      { kind: 'member', id: 'm4', poolId: 'p', ipAddress: '192.0.2.10', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta },
      { kind: 'member', id: 'm6', poolId: 'p', ipAddress: '2001:db8::10', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta },
    ];
    for (let i = 0; i < NAMES; i++) {
      rows.push({ kind: 'service', id: `s${i}`, name: `s${i}`, domain: `h${i}.bench.test.`, algorithm: 'round-robin', ttl: 60, poolId: 'p', chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta } as Row);
    }
    let t0 = performance.now();
    core.apply(planCreateAll(core.holder.current, rows, 'api:bench'));
    console.log(`zone: ${NAMES.toLocaleString('en')} names, applied as one plan in ${(performance.now() - t0).toFixed(0)} ms (above the journal's limit: recorded as a step without differences)`);
    await daemon.ports.applySettled?.();
    // the journal's name maps are rebuilt in slices after a large plan; the first small apply builds them itself otherwise
    await new Promise((r) => setTimeout(r, 2000));

    const changes: { what: string; apply: () => void }[] = [
      { what: 'one TXT record added', apply: () => core.apply(planCreateAll(core.holder.current, [{ kind: 'txtrecord', id: 'txt1', name: '_acme-challenge.h5.bench.test.', values: ['token'], ttl: 60, ...meta } as Row], 'api:txt')) },
      { what: 'one service\'s TTL changed (A and AAAA deleted and added)', apply: () => {
        const cur = getRow<ServiceRow>(core.holder.current, 'service', 's7')!;
        core.apply(planUpdate(core.holder.current, cur, { ...cur, ttl: 300 }, 'api:ttl'));
      } },
    ];
    for (const c of changes) {
      const from = serial();
      t0 = performance.now();
      c.apply();
      const applyMs = performance.now() - t0;
      await daemon.ports.applySettled?.();
      const ixfr = await kdig(port, `IXFR=${from}`);
      const axfr = await kdig(port, 'AXFR');
      console.log(`\n${c.what} (serial ${from} -> ${serial()}; apply with the journal's work: ${applyMs.toFixed(1)} ms)`);
      console.log(`  kdig IXFR=${from}: ${fmt(ixfr)}`);
      console.log(`  kdig AXFR:        ${fmt(axfr)}`);
      console.log(`  IXFR / AXFR bytes: 1 / ${Math.round(axfr.bytes / ixfr.bytes).toLocaleString('en')}`);
    }
  } finally {
    await daemon.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
