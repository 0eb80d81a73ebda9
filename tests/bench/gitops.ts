/**
 * `npm run bench:gitops`: (1) push-to-answer latency: a signed commit changes a service's TTL, the
 * push webhook is sent, and the DNS server (UDP, or the API when no DNS port is published) is polled
 * until it answers with the new TTL; p50/p99 over BENCH_COMMITS commits. (2) load+validate, plan and
 * apply time for repos of 100, 1,000 and 10,000 services (one pool per 10 services, 4 members and a
 * health check each), plus a 1 % update on top. (3) one full reconcile (fetch over git http-backend,
 * verify, load, validate, plan, apply) of the 10,000-service repo. Bounded in count and time.
 */
import { createSocket } from 'node:dgram';
import { execFile, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture } from '../helpers/git-fixture.js';
import { loadManifests } from '../../gitops/load/index.js';
import { validateManifests } from '../../gitops/validate/validate.js';
import { planChanges } from '../../core/plan/plan.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { repoFiles } from './gitops-repo.js';

const execFileAsync = promisify(execFile);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 20);
const PERF_SECONDS = Number(process.env.BENCH_PERF_SECONDS ?? 8);

interface Perf { qps: number; lost: number; sent: number; avgMs: number; maxMs: number }

/** dnsperf for `seconds` against 127.0.0.1:port (bounded: killed after seconds + 30 s). */
function dnsperf(port: number, file: string, seconds: number): Promise<Perf> {
  return new Promise((resolve, reject) => {
    const p = spawn('dnsperf', ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(seconds), '-q', '20', '-t', '2'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    const killer = setTimeout(() => p.kill('SIGKILL'), (seconds + 30) * 1000);
    p.on('error', reject);
    p.on('close', () => {
      clearTimeout(killer);
      const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
      const lat = /Average Latency \(s\):\s+([\d.]+) \(min [\d.]+, max ([\d.]+)\)/.exec(out);
      if (!lat) return reject(new Error(`dnsperf output not understood:\n${out}`));
      resolve({ qps: num(/Queries per second:\s+([\d.]+)/), lost: num(/Queries lost:\s+(\d+)/), sent: num(/Queries sent:\s+(\d+)/), avgMs: Number(lat[1]) * 1000, maxMs: Number(lat[2]) * 1000 });
    });
  });
}
const SIZES = (process.env.BENCH_SIZES ?? '100,1000,10000').split(',').map(Number);

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!; };
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** One UDP query; resolves with the first A answer's TTL (or undefined). */
function queryTtl(port: number, name: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const sock = createSocket('udp4');
    const timer = setTimeout(() => { sock.close(); resolve(undefined); }, 500);
    sock.on('message', (msg) => {
      clearTimeout(timer);
      sock.close();
      const r = dnsPacket.decode(msg);
      resolve(((r.answers ?? []).find((a) => a.type === 'A') as { ttl?: number } | undefined)?.ttl);
    });
    sock.send(dnsPacket.encode({ type: 'query', id: Math.floor(Math.random() * 65535), flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] }), port, '127.0.0.1');
  });
}

async function latency(): Promise<void> {
  const fx = await startGitFixture();
  let d: TestDaemon | undefined;
  try {
    const svc = (ttl: number) => `apiVersion: gslb/v1\nkind: Service\nmetadata: {name: www}\nspec: {domain: www.bench.test., pool: web, algorithm: wrr, ttl: ${ttl}}\n`;
    fx.repo.write('pools/web.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: web}\nspec:\n  members:\n    - {ipAddress: 192.0.2.1, port: 443}\n    - {ipAddress: 192.0.2.2, port: 443}\n');
    fx.repo.write('services/www.yaml', svc(100)).commit('initial', fx.ops);
    d = await startTestDaemon({ gitops: fx.gitops, logging: { format: 'json', level: 'info' } }, { GITOPS_WEBHOOK_SECRET: fx.webhookSecret });
    const first = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    if (!first.ready) throw new Error(`initial reconcile failed: ${first.message}`);
    const dnsPort = d.ports.dnsPort as number | undefined;
    const via = dnsPort ? `DNS (UDP ${dnsPort})` : 'the REST API';
    const answerTtl = async (): Promise<number | undefined> => {
      if (dnsPort) return queryTtl(dnsPort, 'www.bench.test');
      const list = (await api(d!.url, 'GET', '/api/v1/services')).body as { name: string; ttl: number }[];
      return list.find((s) => s.name === 'www')?.ttl;
    };
    const toAnswer: number[] = [];
    const toSwap: number[] = [];
    for (let i = 1; i <= COMMITS; i++) {
      const ttl = 100 + i;
      fx.repo.write('services/www.yaml', svc(ttl)).commit(`ttl ${ttl}`, fx.ops);
      const hook = fx.webhook();
      let swappedAt = 0;
      const off = d.core.bus.on('plan_applied', () => { swappedAt = performance.now(); });
      const t0 = performance.now();
      const res = await api(d.url, 'POST', '/api/v1/gitops/webhook', hook.body, hook.headers);
      if (res.status !== 202) throw new Error(`webhook answered ${res.status}`);
      const deadline = t0 + 10_000;
      while ((await answerTtl()) !== ttl) {
        if (performance.now() > deadline) throw new Error(`TTL ${ttl} not served within 10 s`);
        await new Promise((r) => setTimeout(r, 2));
      }
      toAnswer.push(performance.now() - t0);
      off();
      toSwap.push(swappedAt - t0);
    }
    console.log(`push -> answer via ${via}, ${COMMITS} signed commits, webhook trigger:`);
    console.log(`  webhook -> snapshot swap   p50 ${ms(pct(toSwap, 50))}  p99 ${ms(pct(toSwap, 99))}`);
    console.log(`  webhook -> new answer      p50 ${ms(pct(toAnswer, 50))}  p99 ${ms(pct(toAnswer, 99))}  (target p50 < 1000 ms)`);
    const runs = d.logs.lines.filter((l) => typeof l.msg === 'string' && (l.msg as string).startsWith('reconcile applied')).slice(-COMMITS);
    const steps = Object.keys((runs[0]?.steps ?? {}) as object);
    console.log(`  reconciler step medians:   ${steps.map((k) => `${k} ${ms(pct(runs.map((l) => (l.steps as Record<string, number>)[k]!), 50))}`).join(', ')}`);

    // DNS under load while 20 signed commits are applied (webhook-triggered, one after another)
    if (dnsPort) {
      const qfile = join(fx.root, 'queries.txt');
      writeFileSync(qfile, 'www.bench.test A\n');
      // commits are made before the run (signing with gpg through execFileSync would block this
      // process, which also hosts the daemon); during the run the branch is moved with an async
      // `git update-ref`, as a push would, and the webhook is sent
      const start = fx.repo.head();
      const chain: string[] = [];
      for (let i = 0; i < 20; i++) chain.push(fx.repo.write('services/www.yaml', svc(300 + i)).commit(`ttl ${300 + i}`, fx.ops));
      fx.repo.git(['update-ref', 'refs/heads/main', start]);
      const base = await dnsperf(dnsPort, qfile, PERF_SECONDS);
      const during = dnsperf(dnsPort, qfile, PERF_SECONDS);
      let applied = 0;
      const tEnd = performance.now() + (PERF_SECONDS - 1) * 1000;
      for (const sha of chain) {
        if (performance.now() > tEnd) break;
        await execFileAsync('git', ['update-ref', 'refs/heads/main', sha], { cwd: fx.repo.dir });
        const body = JSON.stringify({ ref: 'refs/heads/main', after: sha });
        const mac = createHmac('sha256', fx.webhookSecret).update(body).digest('hex');
        await api(d.url, 'POST', '/api/v1/gitops/webhook', body, { 'content-type': 'application/json', 'x-gitea-signature': mac });
        const deadline = performance.now() + 10_000;
        while (d.core.holder.current.revision !== sha && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        applied++;
      }
      fx.repo.git(['reset', '-q', '--hard', chain.at(-1)!]);
      const load = await during;
      const row = (name: string, p: Perf) => `  ${name.padEnd(22)} ${p.qps.toFixed(0)} qps, lost ${p.lost}/${p.sent}, avg ${p.avgMs.toFixed(2)} ms, max ${p.maxMs.toFixed(1)} ms`;
      console.log(`dnsperf (${PERF_SECONDS} s, 20 outstanding) on www.bench.test:`);
      console.log(row('idle:', base));
      console.log(row(`during ${applied} applies:`, load));
    }

    // (3) one full reconcile of a 10,000-service repo through the real pipeline
    const big = Math.max(...SIZES);
    fx.repo.git(['rm', '-rq', '.']);
    for (const f of repoFiles(big)) fx.repo.write(f.path, f.text);
    fx.repo.commit(`${big} services`, fx.ops);
    const lastRun = () => d!.logs.lines.filter((l) => typeof l.msg === 'string' && (l.msg as string).startsWith('reconcile applied')).at(-1);
    const stepText = (l: Record<string, unknown> | undefined) => Object.entries((l?.steps ?? {}) as Record<string, number>).map(([k, v]) => `${k} ${ms(v)}`).join(', ');
    let t0 = performance.now();
    const s = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', { force: true })).body;
    let wall = performance.now() - t0;
    if (!s.ready) throw new Error(`big reconcile failed: ${s.message}`);
    console.log(`full reconcile, first import of ${big} services (${s.lastPlan.create} creates): ${ms(wall)} wall`);
    console.log(`  steps: ${stepText(lastRun())}`);
    // the next commit changes one file of the big repo: parsed YAML of unchanged blobs is reused
    fx.repo.write('services/services-0.yaml', repoFiles(big, 30).find((f) => f.path === 'services/services-0.yaml')!.text).commit('ttl 30 for svc-0', fx.ops);
    t0 = performance.now();
    const s2 = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    wall = performance.now() - t0;
    if (!s2.ready) throw new Error(`incremental reconcile failed: ${s2.message}`);
    console.log(`full reconcile, one file changed in the ${big}-service repo (${s2.lastPlan.update} update): ${ms(wall)} wall`);
    console.log(`  steps: ${stepText(lastRun())}`);
  } finally {
    await d?.stop();
    await fx.close();
  }
}

async function scale(): Promise<void> {
  console.log('\nplan + apply (in-process, SQLite on disk, DNS and health parts running):');
  console.log('| services | rows | load+validate | plan | apply | plan+apply | 1 % update plan+apply |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const n of SIZES) {
    const d = await startTestDaemon({ logging: { format: 'json', level: 'warn' } });
    try {
      const files = repoFiles(n);
      let t = performance.now();
      const { manifests } = loadManifests(files);
      const v = validateManifests(manifests);
      if (v.problems.length) throw new Error(v.problems[0]);
      const tLoad = performance.now() - t;
      t = performance.now();
      const plan = planChanges({ desired: v.desired, actual: d.core.holder.current, revision: 'a'.repeat(40), newId: () => d.core.newId(), tenantId: DEFAULT_TENANT });
      const tPlan = performance.now() - t;
      t = performance.now();
      d.core.apply(plan, { force: true });
      const tApply = performance.now() - t;
      const v2 = validateManifests(loadManifests(repoFiles(n, 30)).manifests);
      t = performance.now();
      const plan2 = planChanges({ desired: v2.desired, actual: d.core.holder.current, revision: 'b'.repeat(40), newId: () => d.core.newId(), tenantId: DEFAULT_TENANT });
      d.core.apply(plan2, { force: true });
      const tUpd = performance.now() - t;
      console.log(`| ${n} | ${plan.counts.create} | ${ms(tLoad)} | ${ms(tPlan)} | ${ms(tApply)} | ${ms(tPlan + tApply)} | ${ms(tUpd)} (${plan2.counts.update} updates) |`);
    } finally {
      await d.stop();
    }
  }
}

await latency();
await scale();
