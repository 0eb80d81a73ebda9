/**
 * `npm run bench:answer`: the DNS answer path alone, without sockets: the real daemon (every part,
 * dns.workers 0) serving the `bench:dns` names, and `Answerer.handleInto` called in a loop on the
 * `bench:dns` query mix (90 % the weighted name, 5 % apex SOA, 5 % NXDOMAIN), as the batched UDP
 * path calls it. Prints ns per query over BENCH_ANSWER_QUERIES (default 2,000,000) after a warm-up,
 * as wall time and as the process's user and system CPU time.
 * Run it under `node --cpu-prof` to see where the answer path's time goes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import { pino } from 'pino';
import { validateConfigObject } from '../../runtime/config/load.js';
import { startDaemon } from '../../runtime/daemon.js';
import type { Answerer } from '../../runtime/dns/answer.js';
import '../../runtime/parts-all.js';
import { freeDnsPort } from './dns-gslbd.js';

const N = Number(process.env.BENCH_ANSWER_QUERIES ?? 2_000_000);
const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-answer-'));
const config = validateConfigObject({
  node: { id: 'bench' },
  database: { path: join(dir, 'gslbd.db') },
  api: { enabled: false },
  dns: { listenAddr: '127.0.0.1', port: await freeDnsPort(), domain: 'bench.test', workers: 0 },
  logging: { format: 'json', level: 'warn' },
});
const daemon = await startDaemon(config, { log: pino({ level: 'warn' }), env: {} });
try {
  const inject = async (url: string, payload: unknown) => {
    const r = await daemon.api.inject({ method: 'POST', url, payload: payload as object });
    if (r.statusCode >= 300) throw new Error(`${url}: ${r.statusCode} ${r.body}`);
    return JSON.parse(r.body) as { id: string };
  };
  const pool = await inject('/api/v1/pools', { name: 'bench' });
  for (const [i, ip] of ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'].entries()) {
    await inject(`/api/v1/pools/${pool.id}/members`, { ipAddress: ip, port: 80, weight: 4 - i });
  }
  await inject('/api/v1/services', { name: 'www', domain: 'www.bench.test.', algorithm: 'weighted-round-robin', ttl: 60, poolId: pool.id });
  const a = daemon.ports.dnsAnswerer as Answerer;
  const queries: Buffer[] = [];
  for (let i = 0; i < 20; i++) {
    const [name, type] = i === 0 ? ['bench.test', 'SOA'] : i === 1 ? [`nx${i}.bench.test`, 'A'] : ['www.bench.test', 'A'];
    queries.push(Buffer.from(dnsPacket.encode({ type: 'query', id: i, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: type as 'A' }] })));
  }
  // A Buffer, like the batched socket's shared memory (BatchSocket.mem) that replies are written to.
  const out = Buffer.alloc(64 * 1024);
  const run = (n: number) => {
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const r = a.handleInto(queries[i % 20]!, '127.0.0.1', true, out, (i & 63) * 512, 512);
      if (typeof r === 'number') bytes += r;
    }
    return bytes;
  };
  run(200_000);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const bytes = run(N);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  // Wall time counts the time this thread waited for a core on a shared machine; the process's
  // user CPU time (every thread: GC helpers included) does not.
  console.log(`answer path: ${((ms * 1e6) / N).toFixed(0)} ns per query over ${N} queries (${(bytes / N).toFixed(0)} reply bytes on average); user CPU ${((cpu.user * 1e3) / N).toFixed(0)} ns, system ${((cpu.system * 1e3) / N).toFixed(0)} ns per query`);
} finally {
  await daemon.close();
  rmSync(dir, { recursive: true, force: true });
}
