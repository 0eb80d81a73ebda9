/**
 * The gslbd side of `npm run bench:reconcile`: the real daemon (every part) with DNS on the given
 * port and the GitOps controller on the bench's repo, plus a probe of its main thread (the thread
 * that answers DNS): a 2 ms timer whose late ticks are the event loop's blocks; and every 50 ms
 * the process's CPU time (all threads) and the main thread's busy time, so the CPU spent in the
 * last reconcile's plan and apply steps can be told. Answers IPC requests: `mark` (start a
 * measurement window), `read` (the window's blocks, the last reconcile's log line and the CPU of
 * its plan and apply, DNS counters), `stop`.
 * Usage (spawned by tests/bench/reconcile-100k.ts):
 *   node --import tsx tests/bench/reconcile-server.ts <port> <dir> <gitops.json>
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { validateConfigObject } from '../../runtime/config/load.js';
import { startDaemon } from '../../runtime/daemon.js';
import '../../runtime/parts-all.js';

const [portArg, dir, gitopsFile] = process.argv.slice(2);

/** Keeps the reconcile summary lines (and errors) of the daemon's JSON log. */
const kept: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, cb) {
    for (const l of chunk.toString().split('\n')) {
      // only the few lines kept are parsed (health flips of thousands of members are not)
      if (!l || !(l.includes('"msg":"reconcile') || /"level":[56]0/.test(l))) continue;
      const o = JSON.parse(l) as Record<string, unknown>;
      const msg = String(o.msg ?? '');
      if (msg.startsWith('reconcile') || (o.level as number) >= 50) kept.push({ ...o, loggedAt: performance.now() });
      if ((o.level as number) >= 50) process.stderr.write(`${l}\n`);
    }
    cb();
  },
});

const config = validateConfigObject({
  node: { id: 'bench' },
  database: { path: join(dir!, 'gslbd.db') },
  // the schema wants ports 1…65535; the API listens on a free port (0), set after validation
  api: { enabled: true, listenAddr: '127.0.0.1', port: 1 },
  dns: { listenAddr: '127.0.0.1', port: Number(portArg), domain: 'bench.test', workers: Number(process.env.BENCH_DNS_WORKERS ?? 0) },
  gitops: JSON.parse(readFileSync(gitopsFile!, 'utf8')) as object,
  logging: { format: 'json', level: 'info' },
});
config.api.port = 0;
const daemon = await startDaemon(config, { log: pino({ level: 'info' }, sink), env: {} });

// The probe: a timer due every 2 ms; a tick that comes late by more than 20 ms means the event
// loop was busy that long (every UDP packet waited at least as long).
const TICK = 2;
let last = performance.now();
let blocks: number[] = [];
let busy = 0;
const probe = setInterval(() => {
  const now = performance.now();
  const late = now - last - TICK;
  if (late > 20) { blocks.push(late); busy += late; }
  last = now;
}, TICK);

// CPU samples: [time, process CPU ms (all threads), main thread busy ms]
const samples: [number, number, number][] = [];
const cpuMs = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const sample = () => { samples.push([performance.now(), cpuMs(), performance.eventLoopUtilization().active]); if (samples.length > 20_000) samples.splice(0, 10_000); };
const sampler = setInterval(sample, 50);
/** process CPU and main-thread busy time (ms) in [from, to], from the samples nearest the ends */
function spent(from: number, to: number): { cpu: number; main: number } | null {
  sample();
  const at = (t: number) => samples.reduce((best, s) => (Math.abs(s[0] - t) < Math.abs(best[0] - t) ? s : best));
  if (samples.length < 2) return null;
  const a = at(from);
  const b = at(to);
  return { cpu: Math.round(b[1] - a[1]), main: Math.round(b[2] - a[2]) };
}

process.on('message', (m: { cmd: string }) => {
  void (async () => {
    if (m.cmd === 'mark') {
      blocks = []; busy = 0; last = performance.now();
      process.send!({ ok: true });
    } else if (m.cmd === 'read') {
      const metrics = await daemon.core.metrics.getMetricsAsJSON();
      const q = metrics.find((x) => x.name === 'gslbd_dns_queries_total');
      const byRcode: Record<string, number> = {};
      for (const v of (q?.values ?? []) as { labels: Record<string, string>; value: number }[]) byRcode[v.labels.rcode!] = (byRcode[v.labels.rcode!] ?? 0) + v.value;
      const sorted = [...blocks].sort((a, b) => b - a);
      const run = kept.filter((l) => String(l.msg).startsWith('reconcile')).at(-1);
      const steps = (run?.steps ?? {}) as Record<string, number>;
      const end = run?.loggedAt as number | undefined;
      const tail = (steps.plan ?? 0) + (steps.test ?? 0) + (steps.canary ?? 0) + (steps.apply ?? 0);
      process.send!({
        longest: sorted[0] ?? 0, over100: blocks.filter((b) => b > 100).length, over200: blocks.filter((b) => b > 200).length,
        over1000: blocks.filter((b) => b > 1000).length, top: sorted.slice(0, 8).map((b) => Math.round(b)), busy: Math.round(busy),
        run: run ?? null, byRcode, planApply: end === undefined ? null : spent(end - tail, end),
        rows: [...daemon.core.holder.current.rows.values()].reduce((n, t) => n + t.size, 0),
      });
    } else if (m.cmd === 'stop') {
      clearInterval(probe);
      clearInterval(sampler);
      await daemon.close();
      process.exit(0);
    }
  })();
});
process.send!({ ready: true, port: daemon.ports.dnsPort, udpPath: daemon.ports.dnsUdpPath, api: `http://127.0.0.1:${daemon.apiAddress?.port}` });
