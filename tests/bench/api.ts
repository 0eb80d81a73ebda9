/**
 * `npm run bench:api`: requests per second and p99 latency of GET /api/v1/snapshot with 1,000 pools
 * of 10 members, and of member creation, measured with autocannon on loopback against gslbd
 * running in its own process. Prints a table; bounded in time (two 10 s runs by default).
 */
import autocannon from 'autocannon';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createCore } from '../../runtime/app.js';
import { validateConfigObject } from '../../runtime/config/load.js';
import { planChanges } from '../../core/plan/plan.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { freePort, spawnEntry, waitFor } from '../helpers/proc.js';

const POOLS = Number(process.env.BENCH_POOLS ?? 1000);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 10);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);

function seed(dbPath: string): void {
  const config = validateConfigObject({ database: { path: dbPath } });
  const core = createCore(config, pino({ level: 'warn' }), {});
  const desired: DesiredRow[] = [];
  for (let p = 0; p < POOLS; p++) {
    desired.push({ kind: 'pool', key: `pool-${p}`, fields: { name: `pool-${p}` } });
    for (let m = 0; m < MEMBERS; m++) {
      desired.push({
        kind: 'member', key: `pool-${p}/10.${p >> 8}.${p & 255}.${m + 1}:80`,
        fields: { ipAddress: `10.${p >> 8}.${p & 255}.${m + 1}`, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null },
        refs: [{ field: 'poolId', kind: 'pool', key: `pool-${p}` }],
      });
    }
  }
  // Seeded as REST-owned rows so the member-create run may add to these pools.
  core.apply(planChanges({ desired, actual: core.holder.current, revision: 'seed', newId: () => core.newId(), tenantId: 'default', origin: 'api' }));
  core.db.close();
}

function run(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-api-'));
  const dbPath = join(dir, 'bench.db');
  const t0 = Date.now();
  seed(dbPath);
  console.log(`seeded ${POOLS} pools x ${MEMBERS} members in ${Date.now() - t0} ms`);
  const port = await freePort();
  const dnsPort = await freePort();
  writeFileSync(join(dir, 'config.yaml'), `database: {path: ${dbPath}}\napi: {enabled: true, listenAddr: 127.0.0.1, port: ${port}}\ndns: {listenAddr: 127.0.0.1, port: ${dnsPort}}\nlogging: {level: warn}\n`);
  const proc = spawnEntry('gslbd', ['--config', join(dir, 'config.yaml')], { GSLB_API_KEY: '' });
  proc.stderr!.pipe(process.stderr);
  const base = `http://127.0.0.1:${port}/api/v1`;
  try {
    await waitFor(async () => (await fetch(`${base}/health`)).ok, 30000);
    const size = (await (await fetch(`${base}/snapshot`)).text()).length;
    const snap = await run({ url: `${base}/snapshot`, connections: 10, duration: DURATION });
    const pools = (await (await fetch(`${base}/pools`)).json()) as { id: string }[];
    let n = 0;
    const create = await run({
      url: base, connections: 10, duration: DURATION,
      requests: [{
        method: 'POST', path: '/api/v1/pools/x/members', headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          const i = n++;
          return { ...req, path: `/api/v1/pools/${pools[i % pools.length]!.id}/members`, body: JSON.stringify({ ipAddress: `172.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 8080 }) };
        },
      }],
    });
    const rows = [
      ['GET /snapshot', snap, `${(size / 1024).toFixed(0)} KiB body`],
      ['POST /pools/{id}/members', create, `${create['2xx']} created`],
    ] as const;
    console.log(`\n${'endpoint'.padEnd(28)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(8)}  note`);
    for (const [name, r, note] of rows) {
      console.log(`${name.padEnd(28)} ${r.requests.average.toFixed(0).padStart(9)} ${String(r.latency.p50).padStart(8)} ${String(r.latency.p99).padStart(8)} ${String(r.non2xx).padStart(8)}  ${note}`);
    }
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
