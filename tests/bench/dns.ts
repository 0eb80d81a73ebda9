/**
 * `npm run bench:dns`: dnsperf against gslbd and against gdnsd in the same run, with the same
 * CPU pinning (dnsperf on CPU 0, the server on CPU 1), both serving `www.bench.test` as a weighted
 * set of four addresses (gslbd: weighted-round-robin with live TCP health checks; gdnsd: its
 * `weighted` plugin). Prints qps, average and p99 latency and lost queries for both, the ratio,
 * and gslbd's heap growth over 1M queries. Then CPU per query at a fixed rate (dnsperf -Q) for
 * gslbd, gdnsd and PowerDNS with a LUA record (skipped with a message when pdns_server or its bind
 * backend is missing), from /proc/<pid>/stat before and after, and gslbd's qps with dns.workers 0
 * (the main thread answers) and 2 (two worker threads answer). Every run is bounded in time and count. Environment: BENCH_SECONDS (throughput run
 * length, default 5), BENCH_ROUNDS (default 3), BENCH_HEAP_QUERIES (0 skips the heap run),
 * BENCH_CPU_QPS (the fixed rate, default 20000), BENCH_DNS_ONLY=cpu (only the CPU and workers part).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { runDnsperf, type PerfResult } from './dnsperf.js';
import { ask, cpuSplit, hasTaskset, pin, stopChild } from './child.js';
import { freeDnsPort as freePort, startGslbd, waitAnswer } from './dns-gslbd.js';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Interleaved rounds per server; the medians are reported, which damps noise from a shared machine. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const HEAP_QUERIES = Number(process.env.BENCH_HEAP_QUERIES ?? 1_000_000);
const CPU_QPS = Number(process.env.BENCH_CPU_QPS ?? 20_000);
const ONLY_CPU = process.env.BENCH_DNS_ONLY === 'cpu';
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

/**
 * PowerDNS (pdns_server, bind backend) serving the same weighted set as a LUA record
 * (`pickwrandom`), one receiver thread, with the packet and query caches off so every query runs
 * the record as gslbd and gdnsd compute every answer. Undefined, with the reason printed, when
 * pdns_server or its bind backend is not installed (Debian: pdns-server pdns-backend-bind).
 */
function startPdns(port: number): ChildProcess | undefined {
  const bin = ['/usr/sbin/pdns_server', '/usr/bin/pdns_server'].find((b) => existsSync(b));
  const backend = spawnSync('sh', ['-c', 'ls /usr/lib/*/pdns/libbindbackend.so /usr/lib/pdns/libbindbackend.so 2>/dev/null'], { encoding: 'utf8' }).stdout.trim();
  if (!bin || !backend) {
    console.log(`PowerDNS skipped: ${!bin ? 'pdns_server' : 'its bind backend'} is not installed (apt-get install pdns-server pdns-backend-bind)`);
    return undefined;
  }
  const cfg = join(dir, 'pdns');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'bench.test'), `$TTL 60
@ SOA ns1 hostmaster 1 3600 600 604800 60
@ NS ns1
ns1 A 127.0.0.1
www 60 IN LUA A "pickwrandom({{4,'127.0.0.1'},{3,'127.0.0.2'},{2,'127.0.0.3'},{1,'127.0.0.4'}})"
`);
  writeFileSync(join(cfg, 'named.conf'), `zone "bench.test" { type master; file "${join(cfg, 'bench.test')}"; };\n`);
  const cmd = pin(1, [bin, '--no-config', '--daemon=no', '--guardian=no', '--disable-syslog', '--local-address=127.0.0.1', `--local-port=${port}`,
    '--launch=bind', `--bind-config=${join(cfg, 'named.conf')}`, '--enable-lua-records=yes', `--socket-dir=${cfg}`,
    '--cache-ttl=0', '--query-cache-ttl=0', '--negquery-cache-ttl=0', '--receiver-threads=1', '--distributor-threads=1', '--loglevel=3']);
  return spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'ignore', 'ignore'] });
}

/** CPU time per query of `pid` while dnsperf sends a fixed `CPU_QPS` for `SECONDS`. */
async function cpuPerQuery(pid: number, port: number): Promise<{ usPerQuery: number; userUs: number; systemUs: number; busy: number; r: PerfResult }> {
  const c0 = cpuSplit(pid);
  const t0 = performance.now();
  const r = await dnsperf(port, ['-l', String(SECONDS), '-q', '64', '-Q', String(CPU_QPS)], false);
  const c1 = cpuSplit(pid);
  const per = (s: number) => (s * 1e6) / Math.max(1, r.completed);
  const cpu = c1.user - c0.user + c1.system - c0.system;
  return { usPerQuery: per(cpu), userUs: per(c1.user - c0.user), systemUs: per(c1.system - c0.system), busy: cpu / ((performance.now() - t0) / 1000), r };
}

/** The CPU-per-query comparison and gslbd's qps with dns.workers 0 and 2 (see the file comment). */
async function cpuAndWorkers(gslbd: ChildProcess, gPort: number, gdnsd: ChildProcess, dPort: number): Promise<void> {
  // qps with dns.workers 0 and 2. This machine's two cores bound what it can show: dnsperf needs
  // one, so on CPU 1 alone two answering threads share one core (this measures the cost of the
  // second thread, not scaling), and on CPUs 0-1 the second thread competes with dnsperf.
  console.log(`\nqps (max, 64 outstanding) by dns.workers, medians of ${ROUNDS} rounds of ${SECONDS}s:`);
  console.log(`  workers 0, server on CPU 1:    ${(await maxQps(gPort)).toFixed(0)} qps`);
  for (const cpus of [1, '0,1'] as const) {
    const port = await freePort();
    const g2 = await startGslbd(port, join(dir, `gslbd-2-${String(cpus)}`), { workers: 2, cpus });
    try {
      await waitAnswer(port);
      console.log(`  workers 2, server on CPU ${String(cpus).padEnd(4)}: ${(await maxQps(port)).toFixed(0)} qps`);
    } finally {
      await stopChild(g2);
    }
  }
  // gslbd with receive coalescing off (dns.udpCoalesce 0), beside the default one
  const zPort = await freePort();
  const zFile = join(dir, 'dns-nocoalesce.json');
  writeFileSync(zFile, JSON.stringify({ udpCoalesce: '0' }));
  const gslbd0 = await startGslbd(zPort, join(dir, 'gslbd-1-nocoalesce'), { dnsFile: zFile });
  const pPort = await freePort();
  const pdns = startPdns(pPort);
  try {
    await waitAnswer(zPort);
    if (pdns) await waitAnswer(pPort);
    const servers: [string, number, number][] = [['gslbd', gslbd.pid!, gPort], ['gslbd-co0', gslbd0.pid!, zPort], ['gdnsd', gdnsd.pid!, dPort]];
    if (pdns) servers.push(['pdns-lua', pdns.pid!, pPort]);
    for (const [, , port] of servers) await dnsperf(port, ['-l', '2', '-q', '64', '-Q', String(CPU_QPS)], false); // warm-up
    const cpu: Record<string, number[]> = {};
    const lat: Record<string, number[]> = {};
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, pid, port] of r % 2 === 0 ? servers : [...servers].reverse()) {
        const m = await cpuPerQuery(pid, port);
        (cpu[name] ??= []).push(m.usPerQuery);
        (lat[name] ??= []).push(m.r.avgMs);
        console.log(`  ${name.padEnd(9)} round ${r + 1}: ${m.usPerQuery.toFixed(2)} µs CPU/query (user ${m.userUs.toFixed(2)}, system ${m.systemUs.toFixed(2)}), ${(m.busy * 100).toFixed(0)}% of a core, ${m.r.completed} answered, lost ${m.r.lost}, avg latency ${(m.r.avgMs * 1000).toFixed(0)} µs`);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(`\nCPU per query at a fixed ${CPU_QPS} qps (user+system of the server process, medians of ${ROUNDS} rounds of ${SECONDS}s):`);
    for (const [name] of servers) console.log(`  ${name.padEnd(9)}  ${median(cpu[name]!).toFixed(2)} µs, avg latency ${(median(lat[name]!) * 1000).toFixed(0)} µs`);
    console.log(`ratio gslbd/gdnsd CPU per query: ${(median(cpu.gslbd!) / median(cpu.gdnsd!)).toFixed(2)}x (dns.udpCoalesce 0: ${(median(cpu['gslbd-co0']!) / median(cpu.gdnsd!)).toFixed(2)}x)`);
    if (cpu['pdns-lua']) console.log(`ratio gslbd/pdns-lua CPU per query: ${(median(cpu.gslbd!) / median(cpu['pdns-lua']!)).toFixed(2)}x`);
  } finally {
    await stopChild(gslbd0);
    if (pdns) await new Promise<void>((r) => { pdns.once('exit', () => r()); pdns.kill('SIGTERM'); setTimeout(r, 5000).unref(); });
  }
}

/** Median max qps over ROUNDS runs (dnsperf on CPU 0). */
async function maxQps(port: number): Promise<number> {
  await dnsperf(port, ['-l', '2', '-q', '64'], false);
  const qps: number[] = [];
  for (let r = 0; r < ROUNDS; r++) qps.push((await dnsperf(port, ['-l', String(SECONDS), '-q', '64'], false)).qps);
  return [...qps].sort((a, b) => a - b)[Math.floor(qps.length / 2)]!;
}


const fmt = (r: PerfResult) => `qps ${r.qps.toFixed(0).padStart(7)}  avg ${r.avgMs.toFixed(3)} ms  p99 ${r.p99Ms?.toFixed(3) ?? 'n/a'} ms  sent ${r.sent}  lost ${r.lost}`;

async function main() {
  // The same names for both servers: the weighted name (most traffic), the apex SOA and an NXDOMAIN.
  const lines: string[] = [];
  for (let i = 0; i < 1000; i++) lines.push(i % 20 === 0 ? 'bench.test SOA' : i % 20 === 1 ? `nx${i}.bench.test A` : 'www.bench.test A');
  writeFileSync(join(dir, 'queries.txt'), `${lines.join('\n')}\n`);
  console.log(`pinning: ${hasTaskset ? 'dnsperf on CPU 0, server on CPU 1' : 'taskset unavailable: no pinning'}; ${SECONDS}s per throughput run`);

  const gPort = await freePort();
  const gslbd = await startGslbd(gPort, join(dir, 'gslbd-1-1'));
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
    if (ONLY_CPU) {
      await cpuAndWorkers(gslbd, gPort, gdnsd, dPort);
      return;
    }
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

    console.log('');
    await cpuAndWorkers(gslbd, gPort, gdnsd, dPort);
    if (HEAP_QUERIES <= 0) return;
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
