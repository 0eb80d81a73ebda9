/**
 * `npm run bench:health`: the health checker probing N TCP members at a 1 s interval. The members
 * are real TCP listeners on distinct 127.0.0.0/8 addresses (one port) in child processes, so the
 * CPU measured here is the checker's alone. After a warm-up that lasts until the loop has caught
 * up with the first results, reports CPU % of one core, memory, probe scheduling lag (and its
 * longest per second) and connect RTT spread, and down/up detection times after closing and
 * reopening 1 % of the listeners.
 *
 * Options: `--sizes 1000,10000` (members), `--seconds 10` (measured), `--tcp-probe syn|native|net`
 * (the TCP probe path: syn = half-open probes, needs CAP_NET_RAW, else native; native falls back to
 * net when the addon is missing), `--farm node|defer`:
 * - `node` (default): Node listeners that accept and destroy every connection;
 * - `defer`: python3 listeners with TCP_DEFER_ACCEPT (tests/bench/health-farm.py) that never wake
 *   up: on loopback the member side's kernel work shrinks to the SYN, SYN-ACK and RST handling,
 *   which is closer to what a prober pays against remote members. Needed at 100,000 members on a
 *   small machine, where the accepting farm alone would need several cores.
 * Each farm process holds at most PER_FARM listeners (file descriptors; see `ulimit -n`).
 *
 * `--netns` (root, with `--farm defer`): the members live in a network namespace of their own,
 * reached through a veth pair, with each side's received packets processed on its own CPU (the
 * checker on CPU 0, the members on CPU 1: tests/bench/health-netns.ts), so the member side's kernel
 * work is no longer billed to the checker as it is on loopback. Adds CPU 0's whole busy time and
 * its softirq share to the report.
 *
 * `--dns-qps N`: gslbd's DNS server runs on the checker's thread, as in the daemon, answering a
 * service over four of the probed members from the live health view (tests/bench/health-dns.ts);
 * dnsperf sends N queries a second to it for the measured seconds once before the checks start
 * and again during the measurement (pinned to CPU 1 with --netns), and both runs' losses and
 * latencies are reported.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { HealthScheduler, type ProbeRecord } from '../../runtime/health/scheduler.js';
import { HealthMonitor } from '../../runtime/health/monitor.js';
import { HealthView } from '../../runtime/ports/health-view.js';
import { EventBus } from '../../core/events/bus.js';
import { createCheckers, tcpProbePath, type TcpProbePath } from '../../runtime/health/checkers/index.js';
import { NativeTcpChecker } from '../../runtime/health/checkers/tcp-native.js';
import { checkKeyOf } from '../../runtime/health/targets.js';
import { HEALTHCHECK_DEFAULTS } from '../../core/model/normalize.js';
import type { CheckTarget } from '../../runtime/health/types.js';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { registerHealthMetrics, type HealthMetrics } from '../../runtime/health/metrics.js';
import { cpuJiffies, createMemberNetns, pinSelf, type MemberNetns } from './health-netns.js';
import { perfText, startBenchDns, steadyDnsperf } from './health-dns.js';

/** Member i's address (tests/bench/health-farm.py computes the same); another with --netns. */
let ipOf = (i: number) => `127.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
/** the members' namespace with --netns */
let netns: MemberNetns | undefined;
/**
 * Listeners per farm process: each is a file descriptor and the hard `ulimit -n` may be low
 * (20,000 on the development VM), so 100,000 members take several processes.
 */
const PER_FARM = 15000;

type FarmKind = 'node' | 'defer';
type Reply = { op: string; at?: number; port?: number; usage?: { user: number; system: number } };
type Command = { op: 'close' | 'open' | 'cpu' | 'exit'; from?: number; to?: number };

// ---- the `node` farm: one child process of this script per PER_FARM members ----------------
/** Listeners for members [from, to) on `port0` (0: the first picks one); accepts and destroys. */
async function runListeners(from: number, to: number, port0: number): Promise<void> {
  const servers: Server[] = [];
  const listen = (i: number, port: number) => new Promise<number>((resolve, reject) => {
    const s = createServer((c) => c.destroy());
    s.once('error', reject);
    s.listen({ port, host: ipOf(i), backlog: 511 }, () => resolve((s.address() as { port: number }).port));
    servers[i - from] = s;
  });
  const port = await listen(from, port0);
  await Promise.all(Array.from({ length: to - from - 1 }, (_, k) => listen(from + 1 + k, port)));
  const send = (m: Reply) => process.send!(m);
  // A failure is left as an unhandled rejection on purpose: it ends this child and so the bench.
  process.on('message', (m: Command) => void onMessage(m));
  // a bench that ended without stopping its farm (an error) does not leave the listeners behind
  process.on('disconnect', () => process.exit(0));
  async function onMessage(m: Command): Promise<void> {
    const a = Math.max(m.from ?? 0, from) - from;
    const b = Math.min(m.to ?? 0, to) - from;
    if (m.op === 'close') {
      await Promise.all(servers.slice(a, Math.max(a, b)).map((s) => new Promise((r) => s.close(r))));
      send({ op: 'closed', at: Date.now() });
    } else if (m.op === 'open') {
      await Promise.all(Array.from({ length: Math.max(0, b - a) }, (_, k) => listen(from + a + k, port)));
      send({ op: 'opened', at: Date.now() });
    } else if (m.op === 'cpu') {
      const u = process.cpuUsage();
      send({ op: 'cpu', usage: { user: u.user, system: u.system } });
    } else if (m.op === 'exit') {
      process.exit(0);
    }
  }
  send({ op: 'ready', port });
}

/** One farm process, whichever kind: send a command, wait for the reply of a given op. */
interface FarmProcess {
  ask(cmd: Command, op: string): Promise<Reply>;
  /** the `ready` reply, with the port */
  ready: Promise<Reply>;
  exited: Promise<unknown>;
}

function nodeFarmProcess(from: number, to: number, port: number): FarmProcess {
  const child = fork(fileURLToPath(import.meta.url), ['--listeners', String(from), String(to), String(port)], { execArgv: ['--import', 'tsx'] });
  return {
    ready: new Promise((resolve) => child.once('message', resolve)),
    ask: (cmd, op) => new Promise((resolve) => {
      const on = (m: Reply) => { if (m.op === op) { child.off('message', on); resolve(m); } };
      child.on('message', on);
      child.send(cmd);
    }),
    exited: new Promise((r) => child.once('exit', r)),
  };
}

function deferFarmProcess(from: number, to: number, port: number): FarmProcess {
  const script = fileURLToPath(new URL('./health-farm.py', import.meta.url));
  const args = [script, String(from), String(to), String(port)];
  // with --netns: inside the members' namespace, on CPU 1
  const cmd = netns ? ['ip', 'netns', 'exec', netns.name, 'taskset', '-c', '1', 'python3', ...args, netns.base] : ['python3', ...args];
  const child: ChildProcess = spawn(cmd[0]!, cmd.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: { op: string; resolve: (m: Reply) => void }[] = [];
  const ready = new Promise<Reply>((resolve) => waiting.push({ op: 'ready', resolve }));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const m = JSON.parse(line) as Reply;
    const i = waiting.findIndex((w) => w.op === m.op);
    if (i >= 0) waiting.splice(i, 1)[0]!.resolve(m);
  });
  return {
    ready,
    ask: (cmd, op) => new Promise((resolve) => {
      waiting.push({ op, resolve });
      child.stdin!.write(`${cmd.op} ${cmd.from ?? 0} ${cmd.to ?? 0}\n`);
    }),
    exited: new Promise((r) => child.once('exit', r)),
  };
}

/** The listener farm for `n` members: PER_FARM listeners per process, all on one port. */
class Farm {
  private constructor(readonly procs: FarmProcess[], readonly port: number) {}

  static async start(kind: FarmKind, n: number): Promise<Farm> {
    const procs: FarmProcess[] = [];
    let port = 0;
    for (let from = 0; from < n; from += PER_FARM) {
      const to = Math.min(n, from + PER_FARM);
      const p = kind === 'node' ? nodeFarmProcess(from, to, port) : deferFarmProcess(from, to, port);
      procs.push(p);
      const ready = await Promise.race([p.ready, p.exited.then((code) => { throw new Error(`listener process exited ${String(code)}`); })]);
      port = ready.port!;
    }
    return new Farm(procs, port);
  }

  /** Sends a command to every process; the latest reply time (`at`). */
  async all(cmd: Command, op: string): Promise<number> {
    const replies = await Promise.all(this.procs.map((p) => p.ask(cmd, op)));
    return Math.max(...replies.map((m) => m.at ?? 0));
  }

  /** CPU µs (user + system) of the whole farm so far. */
  async cpuUs(): Promise<number> {
    const replies = await Promise.all(this.procs.map((p) => p.ask({ op: 'cpu' }, 'cpu')));
    return replies.reduce((sum, m) => sum + m.usage!.user + m.usage!.system, 0);
  }

  async stop(): Promise<void> {
    await Promise.all(this.procs.map((p) => { void p.ask({ op: 'exit' }, 'never'); return p.exited; }));
  }
}

// ---- parent: the checker -------------------------------------------------------------------
/** A histogram of whole milliseconds (0 … 60 s), so recording costs no memory per probe. */
class MsHistogram {
  private readonly counts = new Uint32Array(60_001);
  n = 0;
  add(ms: number): void {
    this.counts[Math.min(60_000, Math.max(0, Math.round(ms)))]!++;
    this.n++;
  }
  pct(p: number): number {
    if (this.n === 0) return NaN;
    const rank = Math.min(this.n, Math.floor((p / 100) * this.n) + 1);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) if ((seen += this.counts[i]!) >= rank) return i;
    return NaN;
  }
}

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function benchSize(n: number, seconds: number, tcpProbe: TcpProbePath, farmKind: FarmKind, dnsQps: number): Promise<Record<string, string>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heap0 = getHeapStatistics().used_heap_size;
  const farm = await Farm.start(farmKind, n);
  const port = farm.port;
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
  const lag = new MsHistogram();
  const rtt = new MsHistogram();
  // the addon's receive time of each answered probe (kernel timestamps for SYN probes)
  const replyRtt = new MsHistogram();
  // failed probes in each second of the measurement
  const failedPerSecond: number[] = [];
  /** the longest schedule lag of the probes started in each second of the measurement */
  const lagMaxPerSecond: number[] = [];
  let recordingSince = 0;
  let warmLagMax = 0;
  let probes = 0;
  let failed = 0;
  const failures = new Map<string, number>();
  const checkers = createCheckers(pino({ level: 'silent' }), { tcpProbe });
  const scheduler = new HealthScheduler({
    checkers,
    // the same per-probe work as runtime/health/part.ts: count, then record
    onResult: (rec: ProbeRecord) => {
      metrics?.countProbe(rec.target.check.type, rec.result.ok);
      monitor.record(rec);
      // the longest lag of the current second while warming up (see the warm-up below)
      warmLagMax = Math.max(warmLagMax, rec.startedAt - rec.dueAt);
      if (!recording) return;
      probes++;
      if (!rec.result.ok) {
        failed++;
        failures.set(rec.result.detail, (failures.get(rec.result.detail) ?? 0) + 1);
        const sec = Math.floor((rec.finishedAt - recordingSince) / 1000);
        failedPerSecond[sec] = (failedPerSecond[sec] ?? 0) + 1;
      } else {
        replyRtt.add(rec.result.rttMs);
      }
      lag.add(rec.startedAt - rec.dueAt);
      const at = Math.max(0, Math.floor((rec.startedAt - recordingSince) / 1000));
      lagMaxPerSecond[at] = Math.max(lagMaxPerSecond[at] ?? 0, rec.startedAt - rec.dueAt);
      rtt.add(rec.finishedAt - rec.startedAt);
    },
  });
  metrics = registerHealthMetrics(new Registry(), view, scheduler);
  // --dns-qps: the DNS server on this thread, measured under dnsperf before the checks start and
  // during the measured seconds (dnsperf on CPU 1 with --netns, where the checker is on CPU 0)
  const dns = dnsQps > 0 ? await startBenchDns(view, 'bench', [0, 1, 2, 3].map((i) => ipOf(i))) : undefined;
  const perfCpu = netns ? 1 : undefined;
  const dnsBefore = dns ? await steadyDnsperf(dns.port, dnsQps, seconds, perfCpu) : undefined;
  const res = scheduler.sync(targets);
  for (const t of res.added) monitor.begin(t);
  // Warm-up: the initial spread plus two rounds, then until the loop has caught up with the first
  // results (a second whose longest schedule lag is under 100 ms; at most 20 s in all), so the
  // measured seconds are the steady state; how long it took is reported.
  const warmStart = Date.now();
  await sleep(3000);
  for (warmLagMax = Infinity; warmLagMax >= 100 && Date.now() - warmStart < 20_000;) {
    warmLagMax = 0;
    await sleep(1000);
  }
  const warmUpS = (Date.now() - warmStart) / 1000;
  recording = true;
  recordingSince = Date.now();
  const c0 = process.cpuUsage();
  const k0 = await farm.cpuUs();
  const j0 = cpuJiffies(0);
  const t0 = performance.now();
  let rssMax = 0;
  // (reading RSS opens /proc/self/stat: under EMFILE the sample is skipped)
  const rss = () => { try { return process.memoryUsage.rss(); } catch { return 0; } };
  const dnsDuring = dns ? steadyDnsperf(dns.port, dnsQps, seconds, perfCpu) : undefined;
  for (let s = 0; s < seconds; s++) { await sleep(1000); rssMax = Math.max(rssMax, rss()); }
  const wall = performance.now() - t0;
  const during = await dnsDuring;
  await dns?.close();
  const c1 = process.cpuUsage(c0);
  const j1 = cpuJiffies(0);
  const k1 = await farm.cpuUs();
  recording = false;
  const cpu = ((c1.user + c1.system) / 1000 / wall) * 100;
  const farmCpu = ((k1 - k0) / 1000 / wall) * 100;
  gc?.(); // live heap only: what the targets and their state hold
  const mem = { heapUsed: getHeapStatistics().used_heap_size };

  // detection: close 1 % of the listeners, wait for the flips, reopen, wait again
  const k = Math.max(10, Math.floor(n / 100));
  flips.clear();
  flipsSince = Date.now();
  const closedAt = await farm.all({ op: 'close', from: 0, to: k }, 'closed');
  const downKeys = Array.from({ length: k }, (_, i) => `${ipOf(i)}|false`);
  for (let w = 0; w < 60 && downKeys.some((key) => !flips.has(key)); w++) await sleep(100);
  const down = downKeys.map((key) => (flips.get(key) ?? NaN) - closedAt);
  flipsSince = Date.now();
  const openedAt = await farm.all({ op: 'open', from: 0, to: k }, 'opened');
  const upKeys = Array.from({ length: k }, (_, i) => `${ipOf(i)}|true`);
  for (let w = 0; w < 60 && upKeys.some((key) => !flips.has(key)); w++) await sleep(100);
  const up = upKeys.map((key) => (flips.get(key) ?? NaN) - openedAt);
  const missed = (xs: number[]) => xs.filter((x) => !Number.isFinite(x)).length;

  scheduler.stop();
  await farm.stop();
  const synStats = checkers.tcp instanceof NativeTcpChecker && checkers.tcp.syn ? checkers.tcp.prober.synStats() : undefined;
  return {
    members: String(n),
    'TCP probe path': tcpProbePath(checkers),
    'listener farm': farmKind,
    'load average (1 min) at the end': loadavg()[0]!.toFixed(1),
    'probes/s': fmt(probes / (wall / 1000)),
    'failed probes': failed === 0 ? '0' : `${failed} (${[...failures].map(([d, c]) => `${d}: ${c}`).join(', ')})`,
    'checker CPU % of one core': fmt(cpu),
    'checker CPU µs per probe, user / system': `${fmt(c1.user / probes)} / ${fmt(c1.system / probes)}`,
    'listener-farm CPU %': fmt(farmCpu),
    'CPU 0 busy % (softirq %)': netns ? `${fmt(((j1.busy - j0.busy) / (j1.total - j0.total)) * 100)} (${fmt(((j1.softirq - j0.softirq) / (j1.total - j0.total)) * 100)})` : '-',
    'RSS MB (max)': fmt(rssMax / 1048576),
    'heap used MB (after GC; per member, bytes)': gc ? `${fmt(mem.heapUsed / 1048576)} (${Math.round((mem.heapUsed - heap0) / n)})` : `${fmt(mem.heapUsed / 1048576)} (no --expose-gc)`,
    'schedule lag ms p50/p99/max': `${fmt(lag.pct(50))} / ${fmt(lag.pct(99))} / ${fmt(lag.pct(100))}`,
    'connect RTT ms p50/p99/max': `${fmt(rtt.pct(50))} / ${fmt(rtt.pct(99))} / ${fmt(rtt.pct(100))}`,
    'reply RTT ms p50/p99/max (answered probes)': `${fmt(replyRtt.pct(50))} / ${fmt(replyRtt.pct(99))} / ${fmt(replyRtt.pct(100))}`,
    'failed probes per second': Array.from({ length: seconds + 1 }, (_, i) => failedPerSecond[i] ?? 0).join(' '),
    'warm-up s (until a second with lag under 100 ms)': warmUpS.toFixed(0),
    'schedule lag ms, longest per second': Array.from({ length: seconds + 1 }, (_, i) => Math.round(lagMaxPerSecond[i] ?? 0)).join(' '),
    'listeners closed, then reopened': String(k),
    'down detection ms p50/max (not detected)': `${fmt(pct(down.filter(Number.isFinite), 50))} / ${fmt(pct(down.filter(Number.isFinite), 100))} (${missed(down)})`,
    'up detection ms p50/max (not detected)': `${fmt(pct(up.filter(Number.isFinite), 50))} / ${fmt(pct(up.filter(Number.isFinite), 100))} (${missed(up)})`,
    'storage writes (flips + first sync)': String(writes),
    'skipped ticks (probe still in flight)': String(scheduler.skipped),
    'SYN replies dropped / SYNs sent through connect()': synStats ? `${synStats[1]} / ${synStats[2]}` : '-',
    'SYN chunks that waited for send buffer room': synStats ? String(synStats[7]) : '-',
    'SYN replies matching no probe (late)': synStats ? String(synStats[4]) : '-',
    'RSTs sent by the prober (not taken by the socket)': synStats ? `${synStats[5]} (${synStats[6]})` : '-',
    'SYN source ports': synStats ? `${synStats[3]} from ${synStats[0]}` : '-',
    [`DNS at ${dnsQps} q/s before the checks`]: dnsBefore ? perfText(dnsBefore) : '-',
    [`DNS at ${dnsQps} q/s during the measured seconds`]: during ? perfText(during) : '-',
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const li = argv.indexOf('--listeners');
  if (li >= 0) return runListeners(Number(argv[li + 1]), Number(argv[li + 2]), Number(argv[li + 3]));
  const arg = (name: string, def: string) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1]! : def; };
  const sizes = arg('--sizes', '1000,10000').split(',').map(Number);
  const seconds = Number(arg('--seconds', '10'));
  const tcpProbe = arg('--tcp-probe', 'native') as TcpProbePath;
  const farm = arg('--farm', 'node') as FarmKind;
  const dnsQps = Number(arg('--dns-qps', '0'));
  if (argv.includes('--netns')) {
    if (farm !== 'defer') throw new Error('--netns needs --farm defer');
    netns = createMemberNetns();
    ipOf = netns.ipOf;
    pinSelf(0);
  }
  console.log(`health bench: TCP members on ${netns ? `10.64.0.0/14 in network namespace ${netns.name} (checker on CPU 0, members on CPU 1)` : '127.0.0.0/8'}, interval 1 s, timeout 500 ms, ${seconds} s measured, farm ${farm}; node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(1)}`);
  const rows: Record<string, string>[] = [];
  for (const n of sizes) {
    const r = await benchSize(n, seconds, tcpProbe, farm, dnsQps);
    rows.push(r);
    console.log(JSON.stringify(r));
  }
  const keys = Object.keys(rows[0]!);
  console.log(`\n| metric | ${rows.map((r) => r.members).join(' | ')} |\n|---|${rows.map(() => '---').join('|')}|`);
  for (const key of keys.slice(1)) console.log(`| ${key} | ${rows.map((r) => r[key] ?? '-').join(' | ')} |`);
  netns?.close();
}

main().catch((err) => { console.error(err); process.exit(1); });
