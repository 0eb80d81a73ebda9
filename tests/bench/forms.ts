/**
 * `npm run bench:forms`: accepted form submissions per second and their latency on loopback.
 * gslbd runs in its own process on a file SQLite database (WAL), pinned to one core with
 * `taskset -c 1` when taskset exists; autocannon runs in this process (pinned to core 0 the same
 * way). The form has every synchronous spam defence on (honeypot, blocked ranges, links,
 * disposable addresses, per-address rate) and one webhook action, so each accepted post is judged,
 * stored and queues one delivery. Prints a table and checks that every accepted post was stored
 * once with one queued delivery. Bounded in time: `BENCH_SECONDS` (default 10) per run, two runs.
 * `BENCH_CLUSTER=1` runs it against a three-node cluster instead (forms-cluster.ts).
 */
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { freePort, childEnv, waitFor } from '../helpers/proc.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
// the cluster run pins nothing (its children would inherit this process's core)
if (hasTaskset && !process.env.BENCH_CLUSTER) spawnSync('taskset', ['-pc', '0', String(process.pid)]);

function run(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-forms-'));
  const dbPath = join(dir, 'bench.db');
  const port = await freePort();
  const dnsPort = await freePort();
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, [
    `database: {path: ${dbPath}}`,
    `api: {enabled: true, listenAddr: 127.0.0.1, port: ${port}}`,
    `dns: {listenAddr: 127.0.0.1, port: ${dnsPort}}`,
    'logging: {level: warn}',
    'forms:',
    '  tiers: {bench: {forms: 10, actionsPerForm: 5, submissionsPerMonth: 100000000, fileBytes: 0}}',
    '  defaultTier: bench',
    '  rateLimits: {perIpPerMinute: 100000000, perKeyPerMinute: 100000}',
    '  deliveries: {enabled: false}',
    '',
  ].join('\n'));
  const args = [...(process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : []), '--import', 'tsx', 'runtime/main.ts', '--config', configPath];
  const proc = hasTaskset
    ? spawn('taskset', ['-c', '1', process.execPath, ...args], { env: childEnv({ GSLB_API_KEY: '' }), stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(process.execPath, args, { env: childEnv({ GSLB_API_KEY: '' }), stdio: ['ignore', 'ignore', 'pipe'] });
  proc.stderr!.pipe(process.stderr);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => (await fetch(`${base}/api/v1/health`)).ok, 30000);
    // dev mode (no GSLB_API_KEY): /api/v1 acts as the system, which makes the workspace's key
    const made = await fetch(`${base}/api/v1/apikeys?tenant=default`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench', scopes: ['forms:read', 'forms:write', 'submissions:read'] }),
    });
    if (made.status !== 201) throw new Error(`apikey: ${made.status} ${await made.text()}`);
    const auth = { authorization: `Bearer ${((await made.json()) as { key: string }).key}`, 'content-type': 'application/json' };
    const form = await (await fetch(`${base}/public/v1/form`, {
      method: 'POST', headers: auth,
      body: JSON.stringify({ name: 'Bench', max_links: 3, block_disposable_emails: true, max_per_email_per_hour: 1_000_000, blocked_ips: ['203.0.113.0/24', '2001:db8::/32'] }),
    })).json() as { id: string };
    const action = await fetch(`${base}/public/v1/form/${form.id}/action`, {
      method: 'POST', headers: auth, body: JSON.stringify({ form_id: form.id, type: 'webhook', config: { url: 'https://example.com/hook' } }),
    });
    if (action.status !== 201) throw new Error(`action: ${action.status} ${await action.text()}`);
    let n = 0;
    const post = (connections: number) => run({
      url: base, connections, duration: DURATION,
      requests: [{
        method: 'POST', path: `/f/${form.id}`, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        setupRequest: (req) => ({ ...req, body: `name=Visitor+${n}&email=user${n++ % 5000}%40example.com&message=Hello%2C+see+https%3A%2F%2Fexample.com&fc_honeypot=` }),
      }],
    });
    await run({ url: base, connections: 4, duration: 2, requests: [{ method: 'GET', path: '/api/v1/health' }] }); // warm-up
    const ten = await post(10);
    const one = await post(1);
    const accepted = ten['2xx'] + one['2xx'];

    const db = new Database(dbPath, { readonly: true });
    const stored = (db.prepare('SELECT COUNT(*) AS n, SUM(spam) AS spam FROM form_submissions WHERE form_id = ?').get(form.id) as { n: number; spam: number });
    const queued = (db.prepare('SELECT COUNT(*) AS n FROM form_deliveries WHERE form_id = ?').get(form.id) as { n: number }).n;
    db.close();

    console.log(`\ngslbd ${hasTaskset ? 'pinned to core 1 (taskset), autocannon on core 0' : 'not pinned (no taskset)'}; ${DURATION} s per run; spam defences on; one webhook action queued per submission`);
    console.log(`${'run'.padEnd(16)} ${'subm/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'max ms'.padStart(7)} ${'non-2xx'.padStart(8)} ${'errors'.padStart(7)}`);
    for (const [name, r] of [['10 connections', ten], ['1 connection', one]] as const) {
      console.log(`${name.padEnd(16)} ${r.requests.average.toFixed(0).padStart(8)} ${String(r.latency.p50).padStart(7)} ${String(r.latency.p99).padStart(7)} ${String(r.latency.max).padStart(7)} ${String(r.non2xx).padStart(8)} ${String(r.errors).padStart(7)}`);
    }
    console.log(`accepted ${accepted}; stored ${stored.n} (spam ${stored.spam ?? 0}); deliveries queued ${queued}`);
    // posts still in flight when a run's time is up are stored but not counted by autocannon: at most one per connection
    const inFlight = 10 + 1;
    const ok = stored.n >= accepted && stored.n <= accepted + inFlight && queued === stored.n && (stored.spam ?? 0) === 0;
    console.log(ok
      ? `check: every accepted post stored once with one queued delivery (${stored.n - accepted} more were in flight at the end of a run)`
      : 'check FAILED: stored or queued counts do not match the accepted posts');
    console.log(`target (>= 3,000 submissions/s, p99 < 50 ms, 10 connections): ${ten.requests.average >= 3000 && ten.latency.p99 < 50 ? 'met' : 'missed'}`);
    if (!ok) process.exitCode = 1;
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env.BENCH_CLUSTER) await (await import('./forms-cluster.js')).benchCluster();
else await main();
