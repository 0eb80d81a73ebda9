// test-timeout: 3600000
/**
 * Compaction of the config stream (docs/cluster.md "Compaction"): one `nats-server -js` and
 * in-process gslbd nodes with config sync. A history of 10,000 REST-shaped plans (creates,
 * renames, deletes of pools) is published to the stream and applied by node A, the lease holder,
 * which writes snapshots of its rows as it goes and purges the stream below them. A node that
 * joins empty loads the newest snapshot, replays only the tail, serves DNS and ends with A's rows
 * and ids; a node that was stopped and fell behind the purge point loads it too and drops the rows
 * deleted meanwhile; a running node that was paused while the stream was purged past it notices the
 * purge when it resumes and loads the snapshot too. `GSLBD_COMPACT_PLANS` changes the history's length (BENCHMARKS.md).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { Kvm } from '@nats-io/kv';
import { rmSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { call, spawnGslbd, startNats, stopAllGslbd, stopAllNats, waitFor, type NatsServer } from '../helpers/nats.js';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeService, untilAnswers } from '../helpers/dns-tools.js';
import { publishHistory, rowsDigest } from '../helpers/config-plans.js';
import type { ClusterState } from '../../runtime/cluster/cluster-state.js';
import { parseSnapshotRecord, type SnapshotRecord } from '../../runtime/cluster/config-snapshot.js';

const PLANS = Number(process.env.GSLBD_COMPACT_PLANS ?? 10_000);
/** a snapshot every fifth of the history (2,000 plans for 10,000) */
const EVERY = Math.max(10, Math.floor(PLANS / 5));
const STREAM = 'SVC_cfg';
/** generous: 10,000 plans are applied one by one on a loaded 2-core machine */
const LONG_MS = 30 * 60_000;

const daemons: TestDaemon[] = [];
const conns: NatsConnection[] = [];
const dirs: string[] = [];
after(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const nc of conns) await nc.close().catch(() => undefined);
  await stopAllGslbd();
  await stopAllNats();
});

const state = (nats: NatsServer, snapshot: { every: number; keep: number }) => ({
  enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '3s', nats: { servers: [nats.url] },
  config: { applyTimeout: '5s', snapshotEvery: snapshot.every, snapshotInterval: '0s', snapshotKeep: snapshot.keep },
});
const clusterOf = (d: TestDaemon) => d.core.ports.cluster as ClusterState;
const metricValue = async (d: TestDaemon, name: string, label: string): Promise<number> => {
  const text = await d.core.metrics.getSingleMetricAsString(name);
  const line = text.split('\n').find((l) => l.startsWith(name) && l.includes(label));
  return line ? Number(line.split(' ').at(-1)) : 0;
};

async function bus(nats: NatsServer) {
  const nc = await connect({ servers: nats.url });
  conns.push(nc);
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const record = async (cluster: string): Promise<SnapshotRecord | undefined> => {
    const kv = await new Kvm(js).open('SVC_CFG');
    const e = await kv.get(`${cluster}.snapshot`);
    return e && e.operation === 'PUT' ? parseSnapshotRecord(e.json()) : undefined;
  };
  const snapshotObjects = async () => (await (await new Objm(js).open('SVC_CFG_PLANS')).list()).filter((o) => !o.deleted && o.name.includes('.snapshot.')).map((o) => o.name);
  return { js, jsm, record, snapshotObjects };
}

test(`a node that joins empty loads the newest snapshot instead of replaying ${PLANS} plans, and the stream is purged below it`, async () => {
  const nats = await startNats();
  const { js, jsm, record, snapshotObjects } = await bus(nats);
  const a = await startTestDaemon({ node: { id: 'a' }, cluster: { id: 'cmp' }, state: state(nats, { every: EVERY, keep: 100 }) });
  daemons.push(a);
  await waitFor('A connected and holding the lease', () => clusterOf(a).connected() && clusterOf(a).gitLeader.holds(), 20_000);
  await waitFor('the config stream exists', async () => { try { await jsm.streams.info(STREAM); return true; } catch { return false; } }, 20_000, 100);

  const published = Date.now();
  await publishHistory(js, 'svc.cfg.cmp', 0, PLANS);
  // the last plan: REST writes on A (a pool, a member, a service), published by A itself
  await waitFor('A applied the history', () => clusterOf(a).config().lastSeq >= PLANS, LONG_MS, 200);
  const appliedA = Date.now();
  await makeService(a, { name: 'last', domain: 'last.compact.test.' }, [{ ipAddress: '192.0.2.77' }]);
  await waitFor('A published and applied its REST writes', async () => {
    const c = clusterOf(a).config();
    const info = await jsm.streams.info(STREAM);
    return c.outbox === 0 && c.lastSeq === info.state.last_seq;
  }, 60_000, 50);
  const last = clusterOf(a).config().lastSeq;
  // the lease holder writes one whenever EVERY sequences followed the newest: one comes within EVERY of the head
  const rec = await waitFor('a snapshot near the head', async () => { const r = await record('cmp'); return r && r.seq > last - EVERY ? r : undefined; }, LONG_MS, 200);

  // the stream was purged below the snapshot's purge point, and only the newest snapshot object is left
  const info = await jsm.streams.info(STREAM);
  assert.ok(info.state.first_seq >= rec.purgedBelow, `first sequence ${info.state.first_seq} below the purge point ${rec.purgedBelow}`);
  assert.ok(info.state.messages <= last - rec.purgedBelow + 1, `${info.state.messages} messages left, at most ${last - rec.purgedBelow + 1} expected`);
  assert.equal(await jsm.streams.getMessage(STREAM, { seq: 1 }), null, 'the first plan is gone');
  await waitFor('one snapshot object left', async () => { const names = await snapshotObjects(); return names.length === 1 && names[0]!.includes(`.snapshot.${(await record('cmp'))!.seq}.`); }, 30_000, 100);

  const joinStarted = Date.now();
  const b = await startTestDaemon({ node: { id: 'b' }, cluster: { id: 'cmp' }, state: state(nats, { every: EVERY, keep: 100 }) });
  daemons.push(b);
  await waitFor('B caught up with A', () => clusterOf(b).config().lastSeq === last, LONG_MS, 50);
  assert.equal((await api(b.url, 'GET', '/api/v1/health')).body.status, 'ok');
  await untilAnswers(b.ports.dnsPort!, ['last.compact.test', 'A'], ['192.0.2.77'], 'B answers the record of the last plan');
  const joined = Date.now();

  // the same rows with the same ids and stored text
  const da = rowsDigest(a.core.db);
  const db = rowsDigest(b.core.db);
  assert.equal(db.rows, da.rows);
  assert.equal(db.sha256, da.sha256, 'B holds exactly the rows of A');
  assert.ok(da.rows > PLANS * 0.6, `${da.rows} rows`);

  // B applied one snapshot and the tail after it, not the history
  assert.equal(await metricValue(b, 'gslbd_state_config_snapshots_total', 'direction="loaded"'), 1);
  const loaded = b.logs.lines.find((l) => l.msg === 'config snapshot applied; replaying the stream after it') as { seq: number; rows: number } | undefined;
  assert.ok(loaded, 'B logged the snapshot it applied');
  const revisionsB = b.core.db.prepare('SELECT COUNT(*) FROM revisions').pluck().get() as number;
  const revisionsA = a.core.db.prepare('SELECT COUNT(*) FROM revisions').pluck().get() as number;
  assert.ok(revisionsA >= PLANS, `A recorded ${revisionsA} revisions`);
  assert.ok(revisionsB <= last - loaded.seq + 1, `B recorded ${revisionsB} revisions: the snapshot at ${loaded.seq} and at most the ${last - loaded.seq} sequences after it`);
  // B's ledger carries the history (duplicates of old revisions stay skipped)
  assert.equal(b.core.db.prepare('SELECT COUNT(*) FROM cluster_applied WHERE revision = ?').pluck().get('api:bulk-0'), 1);

  console.log(`compaction plans=${PLANS} applyOnA=${appliedA - published}ms snapshotSeq=${loaded.seq} rows=${da.rows} join=${joined - joinStarted}ms tailRevisions=${revisionsB}`);
});

test('a node stopped before a purge loads the snapshot when it returns, and drops the rows deleted meanwhile', async () => {
  const nats = await startNats();
  const { js, jsm, record } = await bus(nats);
  const a = await startTestDaemon({ node: { id: 'a' }, cluster: { id: 'bh' }, state: state(nats, { every: 100, keep: 10 }) });
  daemons.push(a);
  await waitFor('A connected and holding the lease', () => clusterOf(a).connected() && clusterOf(a).gitLeader.holds(), 20_000);
  await waitFor('the config stream exists', async () => { try { await jsm.streams.info(STREAM); return true; } catch { return false; } }, 20_000, 100);
  const c = await startTestDaemon({ node: { id: 'c' }, cluster: { id: 'bh' }, state: state(nats, { every: 100, keep: 10 }) });
  const dbPath = join(c.dir, 'gslbd.db');
  dirs.push(c.dir);
  // plans 0-7 create pools bh-0 … bh-7; plan 9 of the ten deletes bh-1
  const first = await publishHistory(js, 'svc.cfg.bh', 0, 8, 'bh');
  await waitFor('C applied the first plans', () => clusterOf(c).config().lastSeq === first, 60_000, 20);
  assert.ok(c.core.holder.current.rows.get('pool')?.has('bh-1'));
  await c.close(); // keeps its database

  const last = await publishHistory(js, 'svc.cfg.bh', 8, 400, 'bh');
  await waitFor('A applied them', () => clusterOf(a).config().lastSeq === last, LONG_MS, 50);
  const rec = await waitFor('a snapshot purged past C', async () => { const r = await record('bh'); return r && r.purgedBelow > first + 1 ? r : undefined; }, LONG_MS, 100);
  assert.ok((await jsm.streams.info(STREAM)).state.first_seq > first + 1);

  const c2 = await startTestDaemon({ node: { id: 'c' }, cluster: { id: 'bh' }, database: { path: dbPath }, state: state(nats, { every: 100, keep: 10 }) });
  daemons.push(c2);
  await waitFor('C caught up', () => clusterOf(c2).config().lastSeq === last, LONG_MS, 50);
  assert.equal(await metricValue(c2, 'gslbd_state_config_snapshots_total', 'direction="loaded"'), 1);
  assert.ok(rec.seq > first);
  assert.equal(c2.core.holder.current.rows.get('pool')?.has('bh-1'), false, 'the pool deleted while C was away is gone');
  assert.deepEqual(rowsDigest(c2.core.db), rowsDigest(a.core.db));
});

test('a running node overtaken by a purge (paused meanwhile) loads the snapshot when it resumes instead of skipping what was purged', async () => {
  const nats = await startNats();
  const { js, jsm, record } = await bus(nats);
  const a = await startTestDaemon({ node: { id: 'a' }, cluster: { id: 'test-cluster' }, state: state(nats, { every: 100, keep: 10 }) });
  daemons.push(a);
  await waitFor('A connected and holding the lease', () => clusterOf(a).connected() && clusterOf(a).gitLeader.holds(), 20_000);
  await waitFor('the config stream exists', async () => { try { await jsm.streams.info(STREAM); return true; } catch { return false; } }, 20_000, 100);
  const p = await spawnGslbd('p', state(nats, { every: 100, keep: 10 }));
  const first = await publishHistory(js, 'svc.cfg.test-cluster', 0, 8, 'run');
  await waitFor('P applied the first plans', async () => (await call(p.url, 'GET', '/api/v1/cluster')).body.config?.lastSeq === first, 60_000, 50);
  p.proc!.kill('SIGSTOP');
  let last: number;
  try {
    last = await publishHistory(js, 'svc.cfg.test-cluster', 8, 400, 'run');
    await waitFor('A applied them', () => clusterOf(a).config().lastSeq === last, LONG_MS, 50);
    await waitFor('a snapshot purged past P', async () => { const r = await record('test-cluster'); return r && r.purgedBelow > first + 1 ? r : undefined; }, LONG_MS, 100);
  } finally {
    p.proc!.kill('SIGCONT');
  }
  await waitFor('P caught up', async () => (await call(p.url, 'GET', '/api/v1/cluster')).body.config?.lastSeq === last, LONG_MS, 100);
  // the log file is written asynchronously: wait for the line rather than read it once
  await waitFor('P logged the snapshot it applied', () => readFileSync(join(p.dir, 'gslbd.log'), 'utf8').includes('config snapshot applied; replaying the stream after it'), 30_000, 100);
  const pdb = new Database(join(p.dir, 'gslbd.db'), { readonly: true });
  try {
    assert.deepEqual(rowsDigest(pdb), rowsDigest(a.core.db));
  } finally {
    pdb.close();
  }
});
