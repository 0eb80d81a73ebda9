/**
 * `npm run bench:health`: the health checker probing 1,000 and 10,000 TCP members at a 1 s
 * interval. The members are real TCP listeners on distinct 127.0.0.0/8 addresses (one port) in a
 * child process, so the CPU measured here is the checker's alone. Reports CPU % of one core,
 * memory, probe scheduling lag and connect RTT spread, and down/up detection times after closing
 * and reopening 1 % of the listeners. Options: `--sizes 1000,10000`, `--seconds 10`,
 * `--tcp-probe native|net` (the TCP probe path; native falls back to net when the addon is missing).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { HealthScheduler, type ProbeRecord } from '../../runtime/health/scheduler.js';
import { HealthMonitor } from '../../runtime/health/monitor.js';
import { HealthView } from '../../runtime/health/view.js';
import { EventBus } from '../../runtime/events/bus.js';
import { createCheckers, tcpProbePath, type TcpProbePath } from '../../runtime/health/checkers/index.js';
import { checkKeyOf } from '../../runtime/health/targets.js';
import { HEALTHCHECK_DEFAULTS } from '../../runtime/model/normalize.js';
import type { CheckTarget } from '../../runtime/health/types.js';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { registerHealthMetrics, type HealthMetrics } from '../../runtime/health/metrics.js';

const ipOf = (i: number) => `127.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;

// ---- child: the listener farm -------------------------------------------------------------
async function runListeners(n: number): Promise<void> {
  const servers: Server[] = [];
  const listen = (i: number, port: number) => new Promise<number>((resolve, reject) => {
    const s = createServer((c) => c.destroy());
    s.once('error', reject);
    s.listen({ port, host: ipOf(i), backlog: 511 }, () => resolve((s.address() as { port: number }).port));
    servers[i] = s;
  });
  const port = await listen(0, 0);
  for (let i = 1; i < n; i++) await listen(i, port);
  const send = (m: unknown) => process.send!(m);
  // A failure is left as an unhandled rejection on purpose: it ends this child and so the bench.
  process.on('message', (m: { op: string; from: number; to: number }) => void onMessage(m));
  async function onMessage(m: { op: string; from: number; to: number }): Promise<void> {
    if (m.op === 'close') {
      await Promise.all(servers.slice(m.from, m.to).map((s) => new Promise((r) => s.close(r))));
      send({ op: 'closed', at: Date.now() });
    } else if (m.op === 'open') {
      for (let i = m.from; i < m.to; i++) await listen(i, port);
      send({ op: 'opened', at: Date.now() });
    } else if (m.op === 'cpu') {
      send({ op: 'cpu', usage: process.cpuUsage() });
    } else if (m.op === 'exit') {
      process.exit(0);
    }
  }
  send({ op: 'ready', port });
}

// ---- parent: the checker -------------------------------------------------------------------
function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ask<T>(child: ChildProcess, msg: unknown, op: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { op: string }) => { if (m.op === op) { child.off('message', on); resolve(m as T); } };
    child.on('message', on);
    child.send(msg as never);
  });
}

async function benchSize(n: number, seconds: number, tcpProbe: TcpProbePath): Promise<Record<string, string>> {
  const child = fork(fileURLToPath(import.meta.url), ['--listeners', String(n)], { execArgv: ['--import', 'tsx'] });
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    child.once('message', (m: { op: string; port: number }) => (m.op === 'ready' ? resolve(m) : reject(new Error(String(m.op)))));
    child.once('exit', (code) => reject(new Error(`listener process exited ${code}`)));
  });
  const check = { ...HEALTHCHECK_DEFAULTS, type: 'tcp' as const, port, intervalMs: 1000, timeoutMs: 500 };
  const checkKey = checkKeyOf(check);
  const targets = new Map<string, CheckTarget>();
  for (let i = 0; i < n; i++) {
    const ip = ipOf(i);
    targets.set(`bench|${ip}`, { key: `bench|${ip}`, poolId: 'bench', ip, port, check, checkKey, checkId: 'bench' });
  }
  const view = new HealthView();
  const bus = new EventBus();
  const flips = new Map<string, number>();
  // first flip of each endpoint and direction after `flipsSince` (set when listeners close or reopen)
  let flipsSince = Infinity;
  bus.on('health_transition', (e) => {
    const key = `${e.ipAddress}|${e.healthy}`;
    if (e.timestamp >= flipsSince && !flips.has(key)) flips.set(key, e.timestamp);
  });
  let writes = 0;
  let metrics: HealthMetrics | undefined;
  const monitor = new HealthMonitor({ view, bus, node: 'bench', observe: (d, s) => metrics?.observeDetection(d, s), sink: { write: () => { writes++; }, remove: () => {} } });
  let recording = false;
  const lag: number[] = [];
  const rtt: number[] = [];
  let probes = 0;
  let failed = 0;
  const checkers = createCheckers(pino({ level: 'silent' }), { tcpProbe });
  const scheduler = new HealthScheduler({
    checkers,
    // the same per-probe work as runtime/health/part.ts: count, then record
    onResult: (rec: ProbeRecord) => {
      metrics?.countProbe(rec.target.check.type, rec.result.ok);
      monitor.record(rec);
      if (!recording) return;
      probes++;
      if (!rec.result.ok) failed++;
      lag.push(rec.startedAt - rec.dueAt);
      rtt.push(rec.finishedAt - rec.startedAt);
    },
  });
  metrics = registerHealthMetrics(new Registry(), view, scheduler);
  const res = scheduler.sync(targets);
  for (const t of res.added) monitor.begin(t);
  await sleep(3000); // initial spread plus two rounds
  recording = true;
  const c0 = process.cpuUsage();
  const k0 = (await ask<{ usage: NodeJS.CpuUsage }>(child, { op: 'cpu' }, 'cpu')).usage;
  const t0 = performance.now();
  let rssMax = 0;
  for (let s = 0; s < seconds; s++) { await sleep(1000); rssMax = Math.max(rssMax, process.memoryUsage().rss); }
  const wall = performance.now() - t0;
  const c1 = process.cpuUsage(c0);
  const kEnd = (await ask<{ usage: NodeJS.CpuUsage }>(child, { op: 'cpu' }, 'cpu')).usage;
  recording = false;
  const cpu = ((c1.user + c1.system) / 1000 / wall) * 100;
  const childCpu = ((kEnd.user - k0.user + kEnd.system - k0.system) / 1000 / wall) * 100;
  const mem = process.memoryUsage();

  // detection: close 1 % of the listeners, wait for the flips, reopen, wait again
  const k = Math.max(10, Math.floor(n / 100));
  flips.clear();
  flipsSince = Date.now();
  const closed = await ask<{ at: number }>(child, { op: 'close', from: 0, to: k }, 'closed');
  const downKeys = Array.from({ length: k }, (_, i) => `${ipOf(i)}|false`);
  for (let w = 0; w < 60 && downKeys.some((key) => !flips.has(key)); w++) await sleep(100);
  const down = downKeys.map((key) => (flips.get(key) ?? NaN) - closed.at);
  flipsSince = Date.now();
  const opened = await ask<{ at: number }>(child, { op: 'open', from: 0, to: k }, 'opened');
  const upKeys = Array.from({ length: k }, (_, i) => `${ipOf(i)}|true`);
  for (let w = 0; w < 60 && upKeys.some((key) => !flips.has(key)); w++) await sleep(100);
  const up = upKeys.map((key) => (flips.get(key) ?? NaN) - opened.at);

  scheduler.stop();
  child.send({ op: 'exit' });
  await new Promise((r) => child.once('exit', r));
  return {
    members: String(n),
    'TCP probe path': tcpProbePath(checkers),
    'load average (1 min) at the end': loadavg()[0]!.toFixed(1),
    'probes/s': fmt(probes / (wall / 1000)),
    'failed probes': String(failed),
    'checker CPU % of one core': fmt(cpu),
    'checker CPU µs per probe, user / system': `${fmt(c1.user / probes)} / ${fmt(c1.system / probes)}`,
    'listener-farm CPU %': fmt(childCpu),
    'RSS MB (max)': fmt(rssMax / 1048576),
    'heap used MB': fmt(mem.heapUsed / 1048576),
    'schedule lag ms p50/p99/max': `${fmt(pct(lag, 50))} / ${fmt(pct(lag, 99))} / ${fmt(pct(lag, 100))}`,
    'connect RTT ms p50/p99/max': `${fmt(pct(rtt, 50))} / ${fmt(pct(rtt, 99))} / ${fmt(pct(rtt, 100))}`,
    'listeners closed, then reopened': String(k),
    'down detection ms p50/max': `${fmt(pct(down, 50))} / ${fmt(pct(down, 100))}`,
    'up detection ms p50/max': `${fmt(pct(up, 50))} / ${fmt(pct(up, 100))}`,
    'storage writes (flips + first sync)': String(writes),
    'skipped ticks (probe still in flight)': String(scheduler.skipped),
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const li = argv.indexOf('--listeners');
  if (li >= 0) return runListeners(Number(argv[li + 1]));
  const arg = (name: string, def: string) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1]! : def; };
  const sizes = arg('--sizes', '1000,10000').split(',').map(Number);
  const seconds = Number(arg('--seconds', '10'));
  const tcpProbe = arg('--tcp-probe', 'native') as TcpProbePath;
  console.log(`health bench: TCP members on 127.0.0.0/8, interval 1 s, timeout 500 ms, ${seconds} s measured; node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(1)}`);
  const rows: Record<string, string>[] = [];
  for (const n of sizes) {
    const r = await benchSize(n, seconds, tcpProbe);
    rows.push(r);
    console.log(JSON.stringify(r));
  }
  const keys = Object.keys(rows[0]!);
  console.log(`\n| metric | ${rows.map((r) => r.members).join(' | ')} |\n|---|${rows.map(() => '---').join('|')}|`);
  for (const key of keys.slice(1)) console.log(`| ${key} | ${rows.map((r) => r[key] ?? '-').join(' | ')} |`);
}

main().catch((err) => { console.error(err); process.exit(1); });
