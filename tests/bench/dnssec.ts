/**
 * `npm run bench:dnssec`: what online signing costs. Two gslbd daemons serve `bench.test` as in
 * `bench:dns` (a weighted set of four addresses with live health checks, the apex SOA, NXDOMAIN
 * names), one without DNSSEC and one signing with an ECDSA P-256 KSK and ZSK from dnssec-keygen.
 * dnsperf (pinned to CPU 0, the server to CPU 1) measures, in interleaved rounds (medians):
 *   - unsigned daemon, queries without DO (the baseline);
 *   - signing daemon, queries without DO (must equal the baseline: the hot path is unchanged);
 *   - signing daemon, queries with DO (`dnsperf -D`), the signature cache warm;
 *   - signing daemon, DO queries for a new NXDOMAIN name each (a random-subdomain flood: every
 *     reply needs a fresh NSEC signature; the cache cannot help).
 * First, without sockets, the answer path of both in this one process (ns per query).
 * Environment: BENCH_SECONDS (per run, default 5), BENCH_ROUNDS (default 3).
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasTaskset, pin, stopChild } from './child.js';
import { freeDnsPort, startGslbd, waitAnswer } from './dns-gslbd.js';
import { runDnsperf, type PerfResult } from './dnsperf.js';
import dnsPacket from 'dns-packet';
import { startTestDaemon } from '../helpers/daemon.js';
import { makeService } from '../helpers/dns-tools.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-dnssec-'));

const dnsperf = (port: number, file: string, args: string[]) =>
  runDnsperf(port, join(dir, file), ['-l', String(SECONDS), '-q', '64', ...args], { verbose: false, killAfterSeconds: SECONDS + 120, wrap: (cmd) => pin(0, cmd) });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const mix: string[] = [];
  for (let i = 0; i < 1000; i++) mix.push(i % 20 === 0 ? 'bench.test SOA' : i % 20 === 1 ? `nx${i}.bench.test A` : 'www.bench.test A');
  writeFileSync(join(dir, 'mix.txt'), `${mix.join('\n')}\n`);
  // names never asked before, a new file per run (dnsperf starts each run at the top of its file)
  let floods = 0;
  const floodFile = () => {
    const run = floods++;
    const names: string[] = [];
    for (let i = 0; i < 300_000; i++) names.push(`f${run}-${i.toString(36)}.bench.test A`);
    writeFileSync(join(dir, `flood${run}.txt`), `${names.join('\n')}\n`);
    return `flood${run}.txt`;
  };
  const keygen = (...args: string[]) => join(dir, execFileSync('dnssec-keygen', ['-q', '-K', dir, '-a', 'ECDSAP256SHA256', ...args, 'bench.test'], { encoding: 'utf8' }).trim());
  const keys = [{ file: keygen('-f', 'KSK'), role: 'ksk' }, { file: keygen(), role: 'zsk' }];
  writeFileSync(join(dir, 'dnssec.json'), JSON.stringify({ dnssec: { enabled: true, keys } }));
  await answerPath(keys);
  console.log(`pinning: ${hasTaskset ? 'dnsperf on CPU 0, server on CPU 1' : 'taskset unavailable: no pinning'}; ${ROUNDS} rounds of ${SECONDS}s`);

  const children: ChildProcess[] = [];
  try {
    const plainPort = await freeDnsPort();
    const plainDir = mkdtempSync(join(dir, 'plain-'));
    children.push(await startGslbd(plainPort, plainDir));
    const signPort = await freeDnsPort();
    const signDir = mkdtempSync(join(dir, 'signed-'));
    children.push(await startGslbd(signPort, signDir, { dnsFile: join(dir, 'dnssec.json') }));
    await waitAnswer(plainPort);
    await waitAnswer(signPort);
    const runs: [string, () => Promise<PerfResult>][] = [
      ['unsigned daemon, no DO', () => dnsperf(plainPort, 'mix.txt', [])],
      ['signing daemon, no DO', () => dnsperf(signPort, 'mix.txt', [])],
      ['signing daemon, DO', () => dnsperf(signPort, 'mix.txt', ['-D'])],
      ['signing daemon, DO, new NXDOMAIN name each', () => dnsperf(signPort, floodFile(), ['-D'])],
    ];
    // warm-up: JIT, and the signature cache for the mixed names
    for (const [port, args] of [[plainPort, []], [signPort, []], [signPort, ['-D']]] as const) {
      await runDnsperf(port, join(dir, 'mix.txt'), ['-l', '2', '-q', '64', ...args], { verbose: false, killAfterSeconds: 60, wrap: (cmd) => pin(0, cmd) });
    }
    const results = new Map<string, PerfResult[]>(runs.map(([n]) => [n, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, run] of r % 2 === 0 ? runs : [...runs].reverse()) results.get(name)!.push(await run());
    }
    console.log('\nqueries per second (per round; median), lost queries summed:');
    const med = new Map<string, number>();
    for (const [name, rs] of results) {
      med.set(name, median(rs.map((x) => x.qps)));
      console.log(`  ${name.padEnd(44)} ${rs.map((x) => x.qps.toFixed(0)).join(' / ').padEnd(24)} median ${med.get(name)!.toFixed(0).padStart(7)}  avg ${median(rs.map((x) => x.avgMs)).toFixed(3)} ms  lost ${rs.reduce((a, x) => a + x.lost, 0)}`);
    }
    const base = med.get('unsigned daemon, no DO')!;
    console.log(`\nsigning daemon without DO / unsigned daemon: ${((med.get('signing daemon, no DO')! / base) * 100).toFixed(1)}%`);
    console.log(`DO (cache warm) / unsigned: ${((med.get('signing daemon, DO')! / base) * 100).toFixed(1)}%`);
    console.log(`DO, a signature per reply / unsigned: ${((med.get('signing daemon, DO, new NXDOMAIN name each')! / base) * 100).toFixed(1)}%`);
  } finally {
    for (const c of children) await stopChild(c);
  }
}

/**
 * The answer path alone, without sockets: both daemons in this process, `Answerer.handle` over the
 * query mix, interleaved rounds of 20,000 queries, the best round of each (the least disturbed by
 * the machine's other load). Separate processes differ by more than the code does on a shared
 * machine; one process running both compares the code.
 */
async function answerPath(keys: { file: string; role: string }[]): Promise<void> {
  const start = async (dnssec: boolean) => {
    const d = await startTestDaemon({ logging: { level: 'warn' }, dns: { listenAddr: '127.0.0.1', port: 0, domain: 'bench.test', ...(dnssec ? { dnssec: { enabled: true, keys } } : {}) } } as never);
    const ips = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];
    await makeService(d, { name: 'www', domain: 'www.bench.test.', algorithm: 'weighted-round-robin', ttl: 60 }, ips.map((ipAddress, i) => ({ ipAddress, weight: 4 - i })));
    return d;
  };
  const plain = await start(false);
  const signing = await start(true);
  try {
    const mix = (dnssecOk: boolean) => ['www.bench.test', 'bench.test', 'nx1.bench.test'].map((name, i) => dnsPacket.encode({
      type: 'query', id: 1, flags: 0, questions: [{ name, type: i === 1 ? 'SOA' : 'A' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0 } as never],
    }));
    const rows = [['unsigned daemon, no DO', plain, mix(false)], ['signing daemon, no DO', signing, mix(false)], ['signing daemon, DO (cache warm)', signing, mix(true)]] as const;
    const best = new Map<string, number>();
    for (let round = 0; round < 30; round++) {
      for (const [name, d, qs] of rows) {
        const a = d.ports.dnsAnswerer!;
        const t = process.hrtime.bigint();
        for (let i = 0; i < 20_000; i++) a.handle(qs[i % 20 === 0 ? 1 : i % 20 === 1 ? 2 : 0]!, '127.0.0.1', true, false);
        best.set(name, Math.min(best.get(name) ?? Infinity, Number(process.hrtime.bigint() - t) / 20_000));
      }
    }
    console.log('\nthe answer path alone, in this process (ns per query, best of 30 interleaved rounds of 20,000):');
    for (const [name] of rows) console.log(`  ${name.padEnd(34)} ${best.get(name)!.toFixed(0).padStart(6)} ns`);
  } finally {
    await plain.stop();
    await signing.stop();
  }
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
