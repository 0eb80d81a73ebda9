/**
 * `npm run bench:axfr`: a zone of BENCH_AXFR_NAMES services (default 100,000; one A and one AAAA
 * each) in a gslbd child process, then
 * (1) UDP latency alone: dnsperf at a fixed BENCH_AXFR_QPS (default 5,000) for BENCH_SECONDS;
 * (2) the same dnsperf run while `kdig AXFR` transfers the zone BENCH_AXFR_RUNS times back to back
 *     (the first one builds the zone's record list), one of them signed (hmac-sha256), each timed;
 *     whether UDP answers stalled shows in the maximum latency and the lost queries of (2) against (1),
 *     and in the server's own event-loop delay (the longest time it could not read its UDP socket);
 * (3) two unsigned transfers at the same serial over a raw TCP connection, compared byte for byte.
 * Loopback only; the server listens on port 0; every run is bounded in time.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import { runDnsperf, type PerfResult } from './dnsperf.js';
import { ask, hasTaskset, pin, stopChild } from './child.js';
import { transferRaw } from '../helpers/dns-tools.js';

const NAMES = Number(process.env.BENCH_AXFR_NAMES ?? 100_000);
const QPS = Number(process.env.BENCH_AXFR_QPS ?? 5000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const RUNS = Number(process.env.BENCH_AXFR_RUNS ?? 4);
const SECRET = Buffer.from('gslbd-bench-axfr-hmac-sha256-key').toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-axfr-'));

interface Ready { port: number; udpPath: string; applyMs: number; serial: number }

async function startServer(): Promise<{ child: ChildProcess; ready: Ready }> {
  const args = ['--import', 'tsx', 'tests/bench/axfr-server.ts', '0', dir, String(NAMES), SECRET];
  const cmd = pin(1, [process.execPath, ...args]);
  const child = hasTaskset
    ? spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    : fork(args[2]!, args.slice(3), { execArgv: args.slice(0, 2) });
  const ready = await new Promise<Ready>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('gslbd did not start in 180 s')), 180_000);
    child.once('message', (m) => { clearTimeout(t); resolve(m as Ready); });
    child.once('exit', (c) => reject(new Error(`gslbd exited ${c}`)));
  });
  return { child, ready };
}

interface Xfr { ms: number; records: number; messages: number; bytes: number; ok: boolean }

/** One kdig AXFR (pinned with dnsperf on CPU 0), timed from spawn to exit; kdig prints every record to a pipe. */
function kdigAxfr(port: number, signed: boolean): Promise<Xfr> {
  return new Promise((resolve, reject) => {
    const cmd = pin(0, ['kdig', '@127.0.0.1', '-p', String(port), '+time=30', '+retry=0', ...(signed ? ['-y', `hmac-sha256:bench-key:${SECRET}`] : []), 'bench.test', 'AXFR']);
    const t0 = performance.now();
    const p = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => { tail = (tail + c.toString()).slice(-4000); });
    p.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    const killer = setTimeout(() => p.kill('SIGKILL'), 60_000);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(killer);
      const ms = performance.now() - t0;
      const m = /Received (\d+) B \((\d+) messages, (\d+) records\)/.exec(tail);
      const ok = code === 0 && !!m && !/;; ERROR|TSIG error|failed/i.test(err + tail);
      resolve({ ms, bytes: Number(m?.[1] ?? 0), messages: Number(m?.[2] ?? 0), records: Number(m?.[3] ?? 0), ok });
    });
  });
}

const fmtPerf = (r: PerfResult) => `sent ${r.sent}, lost ${r.lost}, avg ${r.avgMs.toFixed(3)} ms, p99 ${r.p99Ms?.toFixed(3) ?? 'n/a'} ms, max ${r.maxMs.toFixed(1)} ms`;

async function main() {
  const lines: string[] = [];
  for (let i = 0; i < 1000; i++) lines.push(i % 50 === 0 ? 'bench.test SOA' : `h${(i * 97) % NAMES}.bench.test A`);
  const queries = join(dir, 'queries.txt');
  writeFileSync(queries, `${lines.join('\n')}\n`);
  console.log(`pinning: ${hasTaskset ? 'dnsperf and kdig on CPU 0, gslbd on CPU 1' : 'taskset unavailable: no pinning'}`);
  const { child, ready } = await startServer();
  const { port } = ready;
  const perf = (seconds: number) => runDnsperf(port, queries, ['-l', String(seconds), '-q', '100', '-Q', String(QPS)], { verbose: true, killAfterSeconds: seconds + 60, wrap: (c) => pin(0, c) });
  try {
    console.log(`zone: ${NAMES} names (${2 * NAMES} address records), applied as one plan in ${ready.applyMs.toFixed(0)} ms; serial ${ready.serial}; udp path ${ready.udpPath}`);
    await perf(2); // warm-up
    await ask(child, 'lagReset');
    const alone = await perf(SECONDS);
    const lagAlone = await ask(child, 'lag');
    console.log(`\nUDP alone, ${QPS} qps for ${SECONDS} s: ${fmtPerf(alone)}; server event loop delay max ${lagAlone.maxMs!.toFixed(1)} ms`);

    await ask(child, 'lagReset');
    const during = perf(SECONDS);
    await new Promise((r) => setTimeout(r, 1000));
    const xfrs: { signed: boolean; r: Xfr }[] = [];
    const t0 = performance.now();
    for (let i = 0; i < RUNS && performance.now() - t0 < (SECONDS - 2) * 1000; i++) {
      const signed = i === RUNS - 1;
      xfrs.push({ signed, r: await kdigAxfr(port, signed) });
    }
    const busy = await during;
    const lagBusy = await ask(child, 'lag');
    console.log(`UDP during ${xfrs.length} transfers: ${fmtPerf(busy)}; server event loop delay max ${lagBusy.maxMs!.toFixed(1)} ms, p99 ${lagBusy.p99Ms!.toFixed(1)} ms`);
    for (const [i, x] of xfrs.entries()) {
      console.log(`  kdig AXFR #${i + 1}${i === 0 ? ' (first: builds the record list)' : ''}${x.signed ? ' (TSIG hmac-sha256)' : ''}: ${x.r.ms.toFixed(0)} ms, ${x.r.records} records, ${x.r.messages} messages, ${(x.r.bytes / 1048576).toFixed(2)} MiB, ${x.r.ok ? 'ok' : 'FAILED'}`);
    }
    const worst = Math.max(...xfrs.map((x) => x.r.ms));
    console.log(`slowest transfer ${worst.toFixed(0)} ms (target < 2000 ms: ${worst < 2000 ? 'met' : 'NOT met'}); all complete: ${xfrs.every((x) => x.r.ok && x.r.records === 2 * NAMES + 3)}`);
    console.log(`UDP stall check: max latency ${alone.maxMs.toFixed(1)} ms alone vs ${busy.maxMs.toFixed(1)} ms during transfers (kdig shares dnsperf's CPU); lost ${alone.lost} vs ${busy.lost}; longest server event-loop block ${lagAlone.maxMs!.toFixed(1)} ms vs ${lagBusy.maxMs!.toFixed(1)} ms`);

    const q = dnsPacket.encode({ type: 'query', id: 4660, questions: [{ name: 'bench.test', type: 'AXFR' }] });
    const a = await transferRaw(port, q, 60_000);
    const b = await transferRaw(port, q, 60_000);
    const same = a.length === b.length && a.every((m, i) => m.equals(b[i]!));
    console.log(`\ntwo unsigned transfers at serial ${ready.serial}: ${a.length} and ${b.length} messages, ${a.reduce((n, m) => n + m.length, 0)} bytes; byte-identical: ${same}`);
    if (!same || !xfrs.every((x) => x.r.ok)) process.exitCode = 1;
  } finally {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
