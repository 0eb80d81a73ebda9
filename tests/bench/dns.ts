/**
 * `npm run bench:dns`: dnsperf against gslbd and against gdnsd in the same run, with the same
 * CPU pinning (dnsperf on CPU 0, the server on CPU 1), both serving `www.bench.test` as a weighted
 * set of four addresses (gslbd: weighted-round-robin with live TCP health checks; gdnsd: its
 * `weighted` plugin). Prints qps, average and p99 latency and lost queries for both, the ratio,
 * and gslbd's heap growth over 1M queries. Every run is bounded in time and count. Environment:
 * BENCH_SECONDS (throughput run length, default 5), BENCH_ROUNDS (default 3), BENCH_HEAP_QUERIES.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { runDnsperf, type PerfResult } from './dnsperf.js';
import { ask, hasTaskset, pin, stopChild } from './child.js';
import { freeDnsPort as freePort, startGslbd, waitAnswer } from './dns-gslbd.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Interleaved rounds per server; the medians are reported, which damps noise from a shared machine. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const HEAP_QUERIES = Number(process.env.BENCH_HEAP_QUERIES ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-dns-'));

/** Runs dnsperf pinned to CPU 0. With `verbose`, per-query latencies give the p99. */
function dnsperf(port: number, args: string[], verbose: boolean): Promise<PerfResult> {
  return runDnsperf(port, join(dir, 'queries.txt'), args, { verbose, killAfterSeconds: SECONDS + 120, wrap: (cmd) => pin(0, cmd) });
}

function startGdnsd(port: number): ChildProcess {
  const cfg = join(dir, 'gdnsd');
  mkdirSync(join(cfg, 'zones'), { recursive: true });
  writeFileSync(join(cfg, 'config'), `options => {
  listen => [ "127.0.0.1:${port}" ]
  run_dir => ${join(dir, 'gdnsd-run')}
  state_dir => ${join(dir, 'gdnsd-state')}
  udp_threads => 1
  tcp_threads => 1
}
plugins => {
  weighted => {
    www => {
      m1 = [ 127.0.0.1, 4 ]
      m2 = [ 127.0.0.2, 3 ]
      m3 = [ 127.0.0.3, 2 ]
      m4 = [ 127.0.0.4, 1 ]
    }
  }
}
`);
  writeFileSync(join(cfg, 'zones', 'bench.test'), `$TTL 60
@ SOA ns1 hostmaster 1 3600 600 604800 60
@ NS ns1
ns1 A 127.0.0.1
www 60 DYNA weighted!www
`);
  const cmd = pin(1, ['gdnsd', '-c', cfg, 'start']);
  return spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
}

const fmt = (r: PerfResult) => `qps ${r.qps.toFixed(0).padStart(7)}  avg ${r.avgMs.toFixed(3)} ms  p99 ${r.p99Ms?.toFixed(3) ?? 'n/a'} ms  sent ${r.sent}  lost ${r.lost}`;

async function main() {
  // The same names for both servers: the weighted name (most traffic), the apex SOA and an NXDOMAIN.
  const lines: string[] = [];
  for (let i = 0; i < 1000; i++) lines.push(i % 20 === 0 ? 'bench.test SOA' : i % 20 === 1 ? `nx${i}.bench.test A` : 'www.bench.test A');
  writeFileSync(join(dir, 'queries.txt'), `${lines.join('\n')}\n`);
  console.log(`pinning: ${hasTaskset ? 'dnsperf on CPU 0, server on CPU 1' : 'taskset unavailable: no pinning'}; ${SECONDS}s per throughput run`);

  const gPort = await freePort();
  const gslbd = await startGslbd(gPort, dir);
  await waitAnswer(gPort);
  const dPort = await freePort();
  const gdnsd = startGdnsd(dPort);
  let gdnsdErr = '';
  gdnsd.stderr!.on('data', (c: Buffer) => { gdnsdErr += c.toString(); });
  try {
    await waitAnswer(dPort);
  } catch (err) {
    console.error(gdnsdErr);
    throw err;
  }
  // Node's own ceiling for one send per query, same pinning (see dns-raw-server.mjs)
  const rPort = await freePort();
  const rawCmd = pin(1, [process.execPath, 'tests/bench/dns-raw-server.mjs', String(rPort)]);
  const raw = spawn(rawCmd[0]!, rawCmd.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitAnswer(rPort);
  try {
    const servers = [['gslbd', gPort], ['gdnsd', dPort]] as const;
    const tput: Record<string, PerfResult[]> = { gslbd: [], gdnsd: [], 'node-raw': [] };
    const lat: Record<string, PerfResult[]> = { gslbd: [], gdnsd: [] };
    for (const [, port] of servers) await dnsperf(port, ['-l', '2', '-q', '64'], false); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which server goes first so a burst of load elsewhere does not favour one.
      for (const [name, port] of r % 2 === 0 ? servers : [...servers].reverse()) tput[name]!.push(await dnsperf(port, ['-l', String(SECONDS), '-q', '64'], false));
      tput['node-raw']!.push(await dnsperf(rPort, ['-l', String(SECONDS), '-q', '64'], false));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const med = (rs: PerfResult[]): PerfResult => ({
      qps: median(rs.map((x) => x.qps)), avgMs: median(rs.map((x) => x.avgMs)),
      p99Ms: rs.every((x) => x.p99Ms !== undefined) ? median(rs.map((x) => x.p99Ms!)) : undefined, maxMs: Math.max(...rs.map((x) => x.maxMs)),
      sent: rs.reduce((a, x) => a + x.sent, 0), completed: rs.reduce((a, x) => a + x.completed, 0), lost: rs.reduce((a, x) => a + x.lost, 0),
    });
    // p99 at a fixed, sustainable rate (half of gslbd's median peak) so it measures service time, not queueing.
    const rate = Math.max(1000, Math.floor(med(tput.gslbd!).qps * 0.5));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, port] of r % 2 === 0 ? servers : [...servers].reverse()) lat[name]!.push(await dnsperf(port, ['-l', '4', '-q', '64', '-Q', String(rate)], true));
    }
    const results = { gslbd: { tput: med(tput.gslbd!), lat: med(lat.gslbd!) }, gdnsd: { tput: med(tput.gdnsd!), lat: med(lat.gdnsd!) } };
    console.log(`\nthroughput (max, 64 outstanding), ${ROUNDS} rounds of ${SECONDS}s, per round:`);
    for (const n of ['gslbd', 'gdnsd', 'node-raw']) console.log(`  ${n.padEnd(8)}  ${tput[n]!.map((x) => x.qps.toFixed(0)).join(' / ')} qps`);
    console.log('medians (sent and lost summed over rounds):');
    for (const n of ['gslbd', 'gdnsd'] as const) console.log(`  ${n}  ${fmt(results[n].tput)}`);
    console.log(`latency at a fixed ${rate} qps, medians of ${ROUNDS} rounds of 4s:`);
    for (const n of ['gslbd', 'gdnsd'] as const) console.log(`  ${n}  ${fmt(results[n].lat)}`);
    const ratio = results.gslbd.tput.qps / results.gdnsd.tput.qps;
    console.log(`\nratio gslbd/gdnsd qps (medians): ${(ratio * 100).toFixed(1)}% (target >= 60%)`);
    const rawQps = med(tput['node-raw']!).qps;
    console.log(`ratio gslbd/node-raw qps (medians): ${((results.gslbd.tput.qps / rawQps) * 100).toFixed(1)}%; node-raw/gdnsd: ${((rawQps / results.gdnsd.tput.qps) * 100).toFixed(1)}% (node-raw: the most one Node thread reaches with dgram, one send per query)`);
    console.log(`gslbd lost: ${results.gslbd.tput.lost + results.gslbd.lat.lost} (target 0); p99 at fixed rate ${results.gslbd.lat.p99Ms?.toFixed(3)} ms (target < 5 ms)`);

    const before = await ask(gslbd, 'heap');
    const runs = Math.ceil(HEAP_QUERIES / lines.length);
    const heapRun = await dnsperf(gPort, ['-n', String(runs), '-q', '64', '-l', '300'], false);
    const afterHeap = await ask(gslbd, 'heap');
    console.log(`\nheap over ${heapRun.completed} queries (after GC): ${(before.heapUsed! / 1048576).toFixed(1)} MiB -> ${(afterHeap.heapUsed! / 1048576).toFixed(1)} MiB (growth ${((afterHeap.heapUsed! - before.heapUsed!) / 1048576).toFixed(2)} MiB); rss ${(afterHeap.rss! / 1048576).toFixed(0)} MiB; lost ${heapRun.lost}`);
    console.log(`live health: ${afterHeap.healthEntries} members probed, last probe ${Date.now() - afterHeap.lastChecked!} ms ago`);
  } finally {
    raw.kill('SIGTERM');
    gdnsd.kill('SIGTERM');
    await stopChild(gslbd);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
