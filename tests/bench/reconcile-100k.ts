/**
 * `npm run bench:reconcile`: a reconcile of a large repo (BENCH_SERVICES, default 100,000
 * services: one pool per 10 services with 4 members and a TCP health check, 160,000 rows) while
 * dnsperf asks the daemon at a steady rate. Two phases, each a full reconcile through the real
 * pipeline (fetch over git http-backend, signature check, load, validate, plan, test, apply) of a
 * signed commit: the first import, then a 1 % update (the TTL of every 100th service). For each
 * phase it prints the reconcile's step timings, the blocks of the daemon's main thread (the DNS
 * thread: its longest, how many over 100 ms, 200 ms and 1 s), and dnsperf's sent, lost and
 * latency over the reconcile plus a few seconds after it (stale queries answered late count as
 * lost). Bounded: each reconcile must end within 10 minutes, dnsperf is stopped with SIGINT after
 * the phase and killed 30 s later.
 *
 * Environment: BENCH_SERVICES (100000), BENCH_QPS (2000, dnsperf -Q), BENCH_DNS_WORKERS (0,
 * dns.workers), BENCH_CPU_PROF (a folder: the daemon runs with --cpu-prof and writes the profiles
 * of its main thread and of its offload worker there).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadavg } from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startGitFixture } from '../helpers/git-fixture.js';
import { repoFiles } from './gitops-repo.js';
import { freeDnsPort } from './dns-gslbd.js';
import { ask, stopChild } from './child.js';

const execFileAsync = promisify(execFile);
const N = Number(process.env.BENCH_SERVICES ?? 100_000);
const QPS = Number(process.env.BENCH_QPS ?? 2000);
const PROF = process.env.BENCH_CPU_PROF;
/** seconds of dnsperf before the reconcile starts and after it ends */
const LEAD = 3;
const TAIL = 4;

interface Perf { sent: number; completed: number; lost: number; avgMs: number; maxMs: number; perSecond: number[] }

/** Starts dnsperf at a steady QPS; `stop()` ends it with SIGINT and resolves with its report. */
function startDnsperf(port: number, file: string): { stop: () => Promise<Perf> } {
  const p = spawn('dnsperf', ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', '900', '-Q', String(QPS), '-q', '20000', '-t', '2', '-S', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  p.stderr.on('data', () => {});
  const done = new Promise<Perf>((resolve, reject) => {
    p.on('error', reject);
    p.on('close', () => {
      const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
      const lat = /Average Latency \(s\):\s+([\d.]+) \(min [\d.]+, max ([\d.]+)\)/.exec(out);
      if (!lat) return reject(new Error(`dnsperf output not understood:\n${out}`));
      const perSecond = [...out.matchAll(/^\s*[\d.]+: ([\d.]+)\s*$/gm)].map((m) => Number(m[1]));
      resolve({ sent: num(/Queries sent:\s+(\d+)/), completed: num(/Queries completed:\s+(\d+)/), lost: num(/Queries lost:\s+(\d+)/), avgMs: Number(lat[1]) * 1000, maxMs: Number(lat[2]) * 1000, perSecond });
    });
  });
  return {
    stop: () => {
      p.kill('SIGINT');
      const killer = setTimeout(() => p.kill('SIGKILL'), 30_000);
      return done.finally(() => clearTimeout(killer));
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const f1 = (x: number) => x.toFixed(1);

/** Starts the daemon child (tests/bench/reconcile-server.ts); resolves once it answers. */
async function startDaemonChild(port: number, dir: string, gitopsFile: string): Promise<{ child: ChildProcess; api: string }> {
  const execArgv = ['--import', 'tsx', ...(PROF ? ['--cpu-prof', '--cpu-prof-dir', PROF] : [])];
  const child = spawn(process.execPath, [...execArgv, 'tests/bench/reconcile-server.ts', String(port), dir, gitopsFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<{ api: string; udpPath: string }>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('gslbd did not start in 60 s')), 60_000);
    child.once('message', (m) => { clearTimeout(t); resolve(m as { api: string; udpPath: string }); });
    child.once('exit', (c) => reject(new Error(`gslbd exited ${c}`)));
  });
  console.log(`gslbd udp path: ${ready.udpPath}`);
  return { child, api: ready.api };
}

/** Waits (60 s at most) until the controller has applied `sha`. */
async function waitReady(api: string, sha: string): Promise<void> {
  let s: { ready: boolean; lastAppliedRevision: string | null; message: string } | undefined;
  for (let i = 0; i < 300; i++) {
    s = (await (await fetch(`${api}/api/v1/gitops/status`)).json()) as typeof s;
    if (s!.ready && s!.lastAppliedRevision === sha) return;
    await sleep(200);
  }
  throw new Error(`the first reconcile did not finish in 60 s: ${s?.message}`);
}

interface Probe { longest: number; over100: number; over200: number; over1000: number; top: number[]; busy: number; run: Record<string, unknown> | null; byRcode: Record<string, number>; rows: number; planApply: { cpu: number; main: number } | null }

/** One phase: dnsperf from LEAD s before a forced reconcile to TAIL s after it. */
async function phase(name: string, d: { child: ChildProcess; api: string }, port: number, qfile: string): Promise<void> {
  const perf = startDnsperf(port, qfile);
  await sleep(LEAD * 1000);
  const before = (await ask(d.child, 'read')) as unknown as Probe;
  await ask(d.child, 'mark');
  const t0 = performance.now();
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 600_000);
  const res = await fetch(`${d.api}/api/v1/gitops/reconcile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"force":true}', signal: ctl.signal });
  const status = (await res.json()) as { ready: boolean; message: string; lastPlan: { create: number; update: number; delete: number } };
  clearTimeout(timer);
  const wall = performance.now() - t0;
  const during = (await ask(d.child, 'read')) as unknown as Probe;
  await sleep(TAIL * 1000);
  const after = (await ask(d.child, 'read')) as unknown as Probe;
  const p = await perf.stop();
  if (!status.ready) throw new Error(`${name}: reconcile failed: ${status.message}`);
  const steps = Object.entries((during.run?.steps ?? {}) as Record<string, number>).map(([k, v]) => `${k} ${Math.round(v)}`).join(', ');
  const dropped = (after.byRcode.dropped ?? 0) - (before.byRcode.dropped ?? 0);
  console.log(`\n${name}: ${during.rows} rows after it; plan creates=${status.lastPlan.create} updates=${status.lastPlan.update} deletes=${status.lastPlan.delete}`);
  console.log(`  reconcile wall ${Math.round(wall)} ms; steps (ms): ${steps}`);
  const pa = during.planApply;
  if (pa) console.log(`  plan + apply: daemon CPU ${pa.cpu} ms (all threads), main thread busy ${pa.main} ms`);
  console.log(`  main thread during the reconcile: longest block ${Math.round(during.longest)} ms; blocks > 100 ms: ${during.over100}, > 200 ms: ${during.over200}, > 1 s: ${during.over1000}; blocked ${during.busy} ms in all; largest ${during.top.join(', ')} ms`);
  console.log(`  main thread incl. ${TAIL} s after: longest block ${Math.round(after.longest)} ms; blocks > 200 ms: ${after.over200}`);
  console.log(`  dnsperf -Q ${QPS} over ${LEAD} s + reconcile + ${TAIL} s: sent ${p.sent}, lost ${p.lost} (${f1((100 * p.lost) / Math.max(1, p.sent))} %), avg ${f1(p.avgMs)} ms, max ${Math.round(p.maxMs)} ms; dropped as stale by gslbd: ${dropped}`);
  console.log(`  dnsperf answers per second: ${p.perSecond.map((x) => Math.round(x)).join(' ')}`);
}

const fx = await startGitFixture();
const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-'));
let d: { child: ChildProcess; api: string } | undefined;
try {
  console.log(`bench:reconcile — ${N} services, dnsperf -Q ${QPS}, dns.workers ${process.env.BENCH_DNS_WORKERS ?? 0}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} on 2 CPUs`);
  let t = performance.now();
  // the daemon starts on a small commit (its first reconcile runs at start), then each phase
  // moves the branch, as a push would
  for (const f of repoFiles(10)) fx.repo.write(f.path, f.text);
  const start = fx.repo.commit('10 services', fx.ops);
  for (const f of repoFiles(N)) fx.repo.write(f.path, f.text);
  const first = fx.repo.commit(`${N} services`, fx.ops);
  for (const f of repoFiles(N, 30)) fx.repo.write(f.path, f.text);
  const second = fx.repo.commit('ttl 30 for every 100th service', fx.ops);
  fx.repo.git(['update-ref', 'refs/heads/main', start]);
  fx.repo.git(['reset', '-q', '--hard', start]);
  console.log(`repo generated and signed in ${Math.round(performance.now() - t)} ms`);

  const qfile = join(fx.root, 'queries.txt');
  const names: string[] = [];
  for (let i = 0; i < 1000; i++) names.push(`svc-${(i * 7919) % N}.bench.test A`);
  writeFileSync(qfile, `${names.join('\n')}\n`);
  const gitopsFile = join(dir, 'gitops.json');
  writeFileSync(gitopsFile, JSON.stringify(fx.gitops));
  const port = await freeDnsPort();
  d = await startDaemonChild(port, dir, gitopsFile);
  await waitReady(d.api, start);
  await execFileAsync('git', ['update-ref', 'refs/heads/main', first], { cwd: fx.repo.dir });
  await phase('first import', d, port, qfile);
  await execFileAsync('git', ['update-ref', 'refs/heads/main', second], { cwd: fx.repo.dir });
  await phase('1 % update', d, port, qfile);
  console.log(`\nload average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  if (d) await stopChild(d.child);
  await fx.close();
  rmSync(dir, { recursive: true, force: true });
}
