/**
 * `BENCH_CLUSTER=1 npm run bench:forms`: form submissions against a three-node cluster (docs/forms.md
 * "In a cluster"). One `nats-server -js` and three gslbd processes (each its own file SQLite
 * database, config sync on), the same form as the single-node run (every synchronous spam defence,
 * one webhook action). Three autocannon instances post at once, one per node, `CONNECTIONS` each;
 * every answer 2xx means the submission was acked by JetStream first. Then every node's database
 * must hold every accepted post once with one queued delivery (the stream applied everywhere).
 * Nothing is pinned: four servers share the machine's cores with autocannon.
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { freePort, childEnv, waitFor } from '../helpers/proc.js';
import { startNats, stopAllNats } from '../helpers/nats.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);

function run(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

interface Node { id: string; base: string; db: string; proc: ChildProcess }

async function startNode(id: string, dir: string, nats: string): Promise<Node> {
  const port = await freePort();
  const db = join(dir, `${id}.db`);
  const configPath = join(dir, `${id}.yaml`);
  writeFileSync(configPath, [
    `node: {id: ${id}}`,
    'cluster: {id: bench}',
    `database: {path: ${db}}`,
    `api: {enabled: true, listenAddr: 127.0.0.1, port: ${port}}`,
    `dns: {listenAddr: 127.0.0.1, port: ${await freePort()}}`,
    'logging: {level: warn}',
    `state: {enableConfigSync: true, heartbeatInterval: 1s, heartbeatTTL: 5s, nats: {servers: ["${nats}"]}}`,
    'forms:',
    '  tiers: {bench: {forms: 10, actionsPerForm: 5, submissionsPerMonth: 100000000, fileBytes: 0}}',
    '  defaultTier: bench',
    '  rateLimits: {perIpPerMinute: 100000000, perKeyPerMinute: 100000}',
    '  deliveries: {enabled: false}',
    '',
  ].join('\n'));
  const proc = spawn(process.execPath, ['--import', 'tsx', 'runtime/main.ts', '--config', configPath], { env: childEnv({ GSLB_API_KEY: '' }), stdio: ['ignore', 'ignore', 'pipe'] });
  proc.stderr!.pipe(process.stderr);
  const base = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${base}/api/v1/health`).catch(() => undefined))?.ok, 60_000);
  return { id, base, db, proc };
}

/** Runs the cluster bench; sets the exit code when a check fails. */
export async function benchCluster(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-forms-cluster-'));
  const nats = await startNats('bench');
  const nodes: Node[] = [];
  try {
    for (const id of ['a', 'b', 'c']) nodes.push(await startNode(id, dir, nats.url));
    const a = nodes[0]!;
    await waitFor(async () => ((await (await fetch(`${a.base}/api/v1/cluster`)).json()) as { liveNodes: string[] }).liveNodes.length === 3, 60_000);
    const made = await fetch(`${a.base}/api/v1/apikeys?tenant=default`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench', scopes: ['forms:read', 'forms:write', 'submissions:read'] }),
    });
    if (made.status !== 201) throw new Error(`apikey: ${made.status} ${await made.text()}`);
    const auth = { authorization: `Bearer ${((await made.json()) as { key: string }).key}`, 'content-type': 'application/json' };
    const form = await (await fetch(`${a.base}/public/v1/form`, {
      method: 'POST', headers: auth,
      body: JSON.stringify({ name: 'Bench', max_links: 3, block_disposable_emails: true, max_per_email_per_hour: 1_000_000, blocked_ips: ['203.0.113.0/24', '2001:db8::/32'] }),
    })).json() as { id: string };
    const action = await fetch(`${a.base}/public/v1/form/${form.id}/action`, {
      method: 'POST', headers: auth, body: JSON.stringify({ form_id: form.id, type: 'webhook', config: { url: 'https://example.com/hook' } }),
    });
    if (action.status !== 201) throw new Error(`action: ${action.status} ${await action.text()}`);
    for (const n of nodes) await waitFor(async () => (await fetch(`${n.base}/public/v1/form/${form.id}/action`, { headers: auth })).status === 200, 60_000);
    let i = 0;
    const post = (n: Node, duration: number) => run({
      url: n.base, connections: CONNECTIONS, duration,
      requests: [{
        method: 'POST', path: `/f/${form.id}`, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        setupRequest: (req) => ({ ...req, body: `name=Visitor+${i}&email=user${i++ % 5000}%40example.com&message=Hello%2C+see+https%3A%2F%2Fexample.com&fc_honeypot=` }),
      }],
    });
    await Promise.all(nodes.map((n) => post(n, 2))); // warm-up: the stream, buckets and consumers made
    const results = await Promise.all(nodes.map((n) => post(n, DURATION)));
    const accepted = results.reduce((s, r) => s + r['2xx'], 0);
    const warm = i - results.reduce((s, r) => s + r.requests.total, 0);

    console.log(`\nthree gslbd nodes and one nats-server on one machine (not pinned); ${DURATION} s; ${CONNECTIONS} connections per node; spam defences on; one webhook action per submission`);
    console.log(`${'node'.padEnd(6)} ${'subm/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'max ms'.padStart(7)} ${'non-2xx'.padStart(8)} ${'errors'.padStart(7)}`);
    results.forEach((r, k) => console.log(`${nodes[k]!.id.padEnd(6)} ${r.requests.average.toFixed(0).padStart(8)} ${String(r.latency.p50).padStart(7)} ${String(r.latency.p99).padStart(7)} ${String(r.latency.max).padStart(7)} ${String(r.non2xx).padStart(8)} ${String(r.errors).padStart(7)}`));
    const total = results.reduce((s, r) => s + r.requests.average, 0);
    console.log(`${'all'.padEnd(6)} ${total.toFixed(0).padStart(8)} ${''.padStart(7)} ${String(Math.max(...results.map((r) => r.latency.p99))).padStart(7)} (p99: the worst node's)`);

    // every node applies the stream: once they agree, each must hold every accepted post (warm-up and in-flight ones too)
    const count = (n: Node) => {
      const db = new Database(n.db, { readonly: true });
      try {
        // one read transaction: both counts from the same state
        return db.transaction(() => ({
          stored: (db.prepare('SELECT COUNT(*) AS n FROM form_submissions WHERE form_id = ?').get(form.id) as { n: number }).n,
          queued: (db.prepare('SELECT COUNT(*) AS n FROM form_deliveries WHERE form_id = ?').get(form.id) as { n: number }).n,
        }))();
      } finally { db.close(); }
    };
    const counts = await waitFor(() => {
      const c = nodes.map(count);
      return c.every((x) => x.stored === c[0]!.stored && x.stored >= accepted) && c;
    }, 60_000).catch(() => nodes.map(count));
    let ok = true;
    counts.forEach((got, k) => {
      const good = got.stored >= accepted && got.queued === got.stored && got.stored === counts[0]!.stored;
      ok &&= good;
      console.log(`node ${nodes[k]!.id}: stored ${got.stored}, deliveries queued ${got.queued}${good ? '' : ' (MISMATCH)'}`);
    });
    console.log(`accepted ${accepted} (plus ${warm} in the warm-up); ${ok ? 'check: every node holds every accepted post with one queued delivery' : 'check FAILED'}`);
    if (!ok) process.exitCode = 1;
  } finally {
    for (const n of nodes) { n.proc.kill('SIGTERM'); await new Promise((r) => n.proc.once('exit', r)); }
    await stopAllNats();
    rmSync(dir, { recursive: true, force: true });
  }
}
