/**
 * Plans larger than the NATS server's max_payload (docs/cluster.md "Large plans"): a
 * `nats-server -js` with `max_payload: 65536`, a signed config repo, and two gslbd processes with
 * config sync. A git import of 400 members (one plan of several hundred KB) reaches the other
 * node through the object store, with a small reference message at its place in the stream;
 * the plan after it is not stuck behind it; DNS on the other node answers from it; a node
 * restarted with an empty database replays it; an object that is missing, or holds other bytes,
 * stalls the node at the reference instead of being skipped, and the node resumes once the
 * object is back.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { startNats, stopAllNats, spawnGslbd, stopAllGslbd, call, waitFor, type GslbdNode, type NatsServer } from '../helpers/nats.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { dig } from '../helpers/dns-tools.js';
import { freePort } from '../helpers/proc.js';

const KEY = 'd'.repeat(64);
const H = { authorization: `Bearer ${KEY}` };
const ENV = { GSLB_API_KEY: KEY, GSLB_SECRET_KEY: '8'.repeat(64) };
const APPLY_TIMEOUT_MS = 2_000;
const STATE = { enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '3s', config: { applyTimeout: `${APPLY_TIMEOUT_MS / 1000}s` } };
const MAX_PAYLOAD = 65_536;
const STREAM = 'SVC_cfg';
const BUCKET = 'SVC_CFG_PLANS';

let confDir = '';
let nats: NatsServer;
let fx: GitFixture;
let a: GslbdNode, b: GslbdNode;
let nc: NatsConnection;
let jsm: JetStreamManager;
const metricsPorts = new Map<string, number>();

const get = async (n: GslbdNode, path: string) => {
  const r = await call(n.url, 'GET', path, undefined, H);
  assert.equal(r.status, 200, `${n.id} GET ${path}: ${JSON.stringify(r.body)}`);
  return r.body;
};
const clusterOf = async (n: GslbdNode) => (await get(n, '/api/v1/cluster')) as { config: { lastSeq: number; lastRevision: string; outbox: number; stalled?: string } };
const poolNames = async (n: GslbdNode) => ((await get(n, '/api/v1/pools')) as { name: string }[]).map((p) => p.name).sort();
/** Every pool with its members and health check, ordered, as one string. */
const rowsOf = async (n: GslbdNode) => {
  const pools = (await get(n, '/api/v1/pools')) as { id: string; name: string }[];
  const out: unknown[] = [];
  for (const p of pools.sort((x, y) => x.id.localeCompare(y.id))) {
    const members = (await get(n, `/api/v1/pools/${p.id}/members`)) as { id: string }[];
    out.push(p, members.sort((x, y) => x.id.localeCompare(y.id)), (await call(n.url, 'GET', `/api/v1/pools/${p.id}/healthcheck`, undefined, H)).body);
  }
  return JSON.stringify(out);
};
/** A counter's value on a node (the line of `name` whose labels include `label`), 0 when absent. */
const metric = async (n: GslbdNode, name: string, label = '') => {
  const text = await (await fetch(`http://127.0.0.1:${metricsPorts.get(n.id)}/metrics`)).text();
  const line = text.split('\n').find((l) => (l.startsWith(`${name} `) || l.startsWith(`${name}{`)) && l.includes(label));
  return line ? Number(line.split(' ').at(-1)) : 0;
};
const ips = (net: number, count: number) => Array.from({ length: count }, (_, i) => `10.${net}.${Math.floor(i / 200)}.${(i % 200) + 1}`);
const poolYaml = (name: string, addrs: string[]) => `apiVersion: gslb/v1
kind: Pool
metadata: {name: ${name}}
spec:
  members:
${addrs.map((ip) => `    - {ipAddress: ${ip}, port: 80, weight: 1}`).join('\n')}
`;
const reconcileOnA = async () => {
  const r = await call(a.url, 'POST', '/api/v1/gitops/reconcile', {}, H);
  assert.equal(r.status, 200, JSON.stringify(r.body));
};
/** The stream messages of the cluster's subject, by sequence, parsed. */
const streamMessages = async () => {
  const last = (await jsm.streams.info(STREAM)).state.last_seq;
  const out: { seq: number; bytes: number; body: any }[] = [];
  for (let seq = 1; seq <= last; seq++) {
    const m = await jsm.streams.getMessage(STREAM, { seq }).catch(() => null);
    if (m) out.push({ seq, bytes: m.data.byteLength, body: m.json() });
  }
  return out;
};

before(async () => {
  confDir = mkdtempSync(join(tmpdir(), 'gslbd-nats-conf-'));
  writeFileSync(join(confDir, 'nats.conf'), `max_payload: ${MAX_PAYLOAD}\n`);
  nats = await startNats('n1', ['-c', join(confDir, 'nats.conf')]);
  nc = await connect({ servers: nats.url });
  assert.equal(nc.info?.max_payload, MAX_PAYLOAD);
  jsm = await jetstreamManager(nc);
  fx = await startGitFixture();
  fx.repo.write('pools/big.yaml', poolYaml('big', ips(1, 400)));
  fx.repo.write('services/www.yaml', 'apiVersion: gslb/v1\nkind: Service\nmetadata: {name: www}\nspec: {domain: www.big.test., pool: big}\n');
  fx.repo.commit('400 members', fx.ops);
  const spawn = async (id: string) => {
    metricsPorts.set(id, await freePort());
    const extra = { gitops: fx.gitops, metrics: { enablePrometheus: true, listenAddr: '127.0.0.1', port: metricsPorts.get(id) } };
    return spawnGslbd(id, { ...STATE, nats: { servers: [nats.url] } }, extra, ENV);
  };
  // a first, so that a is the git leader
  a = await spawn('a');
  await waitFor('a holds the git lease', async () => (await get(a, '/api/v1/cluster')).gitLeader.holds, 15_000, 50);
  b = await spawn('b');
  await waitFor('b sees a', async () => (await get(b, '/api/v1/cluster')).liveNodes.length === 2, 15_000);
});

after(async () => {
  await nc?.close().catch(() => undefined);
  await stopAllGslbd();
  await stopAllNats();
  await fx?.close();
  if (confDir) rmSync(confDir, { recursive: true, force: true });
});

test('a plan larger than max_payload reaches the other node through the object store; the plan after it is not stuck', async () => {
  await reconcileOnA();
  await waitFor('a applied the import', async () => (await poolNames(a)).includes('big'), 15_000);
  const small = await call(a.url, 'POST', '/api/v1/pools', { name: 'small-after' }, H);
  assert.equal(small.status, 201, JSON.stringify(small.body));
  await waitFor('a published both', async () => (await clusterOf(a)).config.outbox === 0, 15_000, 50);
  const msgs = await streamMessages();
  const refs = msgs.filter((m) => m.body.ref);
  assert.equal(refs.length, 1, 'one plan went by reference');
  const ref = refs[0]!;
  assert.ok(ref.bytes < 1_024, `the reference message is small: ${ref.bytes} bytes`);
  assert.equal(ref.body.ref.bucket, BUCKET);
  assert.ok(ref.body.ref.size > MAX_PAYLOAD, `the plan is ${ref.body.ref.size} bytes`);
  assert.ok(msgs.every((m) => m.bytes <= MAX_PAYLOAD));
  assert.ok(msgs.some((m) => m.seq > ref.seq && m.body.plan?.changes?.some((c: any) => c.after?.name === 'small-after')), 'the small plan follows the reference');
  const os = await new Objm(jetstream(nc)).open(BUCKET);
  const info = await os.info(ref.body.ref.name);
  assert.equal(info?.size, ref.body.ref.size);
  assert.ok((info?.chunks ?? 0) > 1, 'the object is stored in several chunks');

  const last = msgs[msgs.length - 1]!.seq;
  await waitFor('b applied the stream', async () => (await clusterOf(b)).config.lastSeq === last, 20_000, 50);
  assert.deepEqual(await poolNames(b), ['big', 'small-after']);
  const rowsA = await rowsOf(a);
  assert.equal(await rowsOf(b), rowsA);
  assert.ok(rowsA.length > MAX_PAYLOAD);
  assert.equal((await clusterOf(b)).config.stalled ?? null, null);
  assert.equal(await metric(a, 'gslbd_state_config_plans_by_reference_total', 'direction="published"'), 1);
  assert.ok(await metric(b, 'gslbd_state_config_plans_by_reference_total', 'direction="received"') >= 1);

  const members = new Set(ips(1, 400));
  const answers = (await dig(b.dnsPort, ['www.big.test.', 'A'])).answers;
  assert.ok(answers.length > 0, 'b answers for www.big.test');
  for (const ip of answers) assert.ok(members.has(ip), `${ip} is a member of the large plan`);
});

test('a node restarted with an empty database replays the stream, the referenced plan included', async () => {
  const want = await rowsOf(a);
  const last = (await clusterOf(a)).config.lastSeq;
  await b.kill('SIGKILL');
  for (const f of ['gslbd.db', 'gslbd.db-wal', 'gslbd.db-shm']) rmSync(join(b.dir, f), { force: true });
  await b.restart();
  await waitFor('b replayed the stream', async () => (await clusterOf(b)).config.lastSeq === last, 30_000, 50);
  assert.equal(await rowsOf(b), want);
});

test('a missing or corrupt plan object stalls the node at its reference, nothing after it is applied; it resumes once the object is back', async () => {
  await b.kill('SIGTERM');
  fx.repo.write('pools/big2.yaml', poolYaml('big2', ips(2, 400)));
  fx.repo.commit('400 more members', fx.ops);
  await reconcileOnA();
  const small = await call(a.url, 'POST', '/api/v1/pools', { name: 'small-2' }, H);
  assert.equal(small.status, 201, JSON.stringify(small.body));
  await waitFor('a published both', async () => (await clusterOf(a)).config.outbox === 0, 15_000, 50);
  const msgs = await streamMessages();
  const ref = msgs.filter((m) => m.body.ref).at(-1)!;
  assert.ok(msgs.some((m) => m.seq > ref.seq), 'a plan follows the reference');
  const os = await new Objm(jetstream(nc)).open(BUCKET);
  const bytes = await os.getBlob(ref.body.ref.name);
  assert.equal(bytes?.byteLength, ref.body.ref.size);
  await os.delete(ref.body.ref.name);

  await b.restart();
  const st = await waitFor('b stalls at the reference', async () => {
    const c = (await clusterOf(b)).config;
    return c.stalled?.includes(`seq ${ref.seq}`) ? c : undefined;
  }, 20_000, 50);
  assert.match(st.stalled!, /not found/);
  assert.equal(st.lastSeq, ref.seq - 1);
  // past the pause after a stall (applyTimeout), the node tried again and is still where it was
  await new Promise((r) => setTimeout(r, APPLY_TIMEOUT_MS * 2));
  const again = (await clusterOf(b)).config;
  assert.equal(again.lastSeq, ref.seq - 1);
  assert.match(again.stalled ?? '', new RegExp(`seq ${ref.seq}`));
  assert.deepEqual(await poolNames(b), ['big', 'small-after'], 'neither the referenced plan nor the plan after it is applied');
  assert.ok(await metric(b, 'gslbd_state_config_apply_failures_total') >= 2, 'each attempt is counted');

  // bytes of the right size under the right name, but not the plan's: refused by their digest
  const corrupt = Uint8Array.from(bytes!);
  corrupt[10] = corrupt[10] === 0x20 ? 0x09 : 0x20;
  await os.putBlob({ name: ref.body.ref.name }, corrupt);
  await waitFor('b refuses the corrupt object', async () => /has SHA-256 [0-9a-f]{64}, the reference says/.test((await clusterOf(b)).config.stalled ?? ''), 20_000, 50);
  assert.equal((await clusterOf(b)).config.lastSeq, ref.seq - 1);
  assert.deepEqual(await poolNames(b), ['big', 'small-after']);

  await os.putBlob({ name: ref.body.ref.name }, bytes);
  const last = msgs[msgs.length - 1]!.seq;
  await waitFor('b resumes', async () => (await clusterOf(b)).config.lastSeq === last, 20_000, 50);
  assert.deepEqual(await poolNames(b), ['big', 'big2', 'small-2', 'small-after']);
  assert.equal(await rowsOf(b), await rowsOf(a));
  assert.equal((await clusterOf(b)).config.stalled ?? null, null);
});
