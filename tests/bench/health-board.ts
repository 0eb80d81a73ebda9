/**
 * `npm run bench:health-board`: what handing health verdicts to the DNS workers costs, per batch,
 * at 100,000 endpoints. The main thread's side: writing a batch to the shared health board
 * (runtime/dns/health-board.ts) against posting the same rows to each worker as a message (the
 * structured clone of `postMessage`, to BENCH_WORKERS ports, default 2, plus the receiving side's
 * clone and its load into a HealthView, as each worker did before the board). The answer path's
 * side: refreshing a plan's candidates (refreshHealth) of a 1,000-member pool from a HealthView
 * against from the board. Median of BENCH_ROUNDS rounds (default 7) of CPU time, this thread only.
 */
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { HealthBoardReader, HealthBoardWriter } from '../../runtime/dns/health-board.js';
import type { HealthRow } from '../../runtime/dns/worker-protocol.js';
import { refreshHealth, type AnswerHealth, type MemberBase, type ServicePlan } from '../../runtime/dns/service-plan.js';
import { HealthView } from '../../runtime/ports/health-view.js';

const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const N = 100_000;
const pool = (i: number) => `pool-${Math.floor(i / 10)}`;
const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const rowsOf = (from: number, n: number, healthy: boolean): HealthRow[] => Array.from({ length: n }, (_, k) => [pool(from + k), ip(from + k), healthy, 1, 3.5, 1_700_000_000_000]);

/** Median CPU µs of `fn` over ROUNDS rounds (after one warm-up). */
function cpuUs(fn: (round: number) => void): number {
  fn(-1);
  const t: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c = process.cpuUsage();
    fn(r);
    const d = process.cpuUsage(c);
    t.push(d.user + d.system);
  }
  return t.sort((a, b) => a - b)[Math.floor(t.length / 2)]!;
}

const board = new HealthBoardWriter();
board.replace(rowsOf(0, N, true));
const channels = Array.from({ length: WORKERS }, () => new MessageChannel());
const views = channels.map(() => new HealthView());
const fmt = (us: number) => (us >= 10_000 ? `${(us / 1000).toFixed(1)} ms` : `${Math.round(us)} µs`);

console.log(`health board bench: ${N.toLocaleString('en')} endpoints, ${WORKERS} workers, median of ${ROUNDS} rounds, node ${process.version}`);
console.log('| batch | board write (main) | messages: main thread | messages: each worker |');
console.log('|---|---|---|---|');
for (const size of [10, 1_000, 10_000, N]) {
  const batches = [rowsOf(0, size, false), rowsOf(0, size, true)];
  const write = cpuUs((r) => { if (size === N) board.replace(batches[r & 1]!); else board.update(batches[r & 1]!, []); });
  const post = cpuUs((r) => { for (const c of channels) c.port1.postMessage({ t: 'health-delta', rows: batches[r & 1], cleared: [] }); });
  // what each worker then did: take the message (a second clone) and load it into its view
  const load = cpuUs(() => {
    for (let w = 0; w < WORKERS; w++) {
      const m = receiveMessageOnPort(channels[w]!.port2)?.message as { rows: HealthRow[] } | undefined;
      for (const [p, a, healthy, score, rttMs, lastChecked] of m?.rows ?? []) views[w]!.set(p, a, { healthy, score, rttMs, lastChecked, node: '' });
    }
  }) / WORKERS;
  console.log(`| ${size.toLocaleString('en')} ${size === N ? '(whole table)' : 'changed'} | ${fmt(write)} | ${fmt(post)} | ${fmt(load)} |`);
}
for (const c of channels) { c.port1.close(); c.port2.close(); }

// the answer path: a 1,000-member pool's candidates after a change
const members: MemberBase[] = Array.from({ length: 1000 }, (_, i) => ({ ip: ip(i), family: 4, order: i, weight: 1, priority: 0, rumUrl: null, lat: NaN, lon: NaN, rdata: Buffer.alloc(4) }));
const planOf = (): ServicePlan => ({ poolId: 'pool-0', members, healthVersion: -1, healthWaitSince: -1, v4: { enabled: [], healthy: [] }, v6: { enabled: [], healthy: [] } }) as unknown as ServicePlan;
const view = new HealthView();
for (const [, a, healthy, score, rttMs, lastChecked] of rowsOf(0, 1000, true)) view.set('pool-0', a, { healthy, score, rttMs, lastChecked, node: '' });
board.update(rowsOf(0, 1000, true).map(([, a, ...rest]) => ['pool-0', a, ...rest] as HealthRow), []);
const refresh = (h: AnswerHealth) => cpuUs(() => { for (let k = 0; k < 100; k++) { const p = planOf(); refreshHealth(p, h); } }) / 100;
console.log(`\nrefreshHealth of a 1,000-member pool: HealthView ${fmt(refresh(view))}, health board ${fmt(refresh(new HealthBoardReader(board.buffers)))}`);
