/**
 * Config sync on a three-server NATS cluster (routes between three nats-server processes,
 * JetStream replicas 3). One NATS server is killed while the gslbd nodes keep writing: every
 * revision must reach every node exactly once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { startNatsCluster, stopAllNats, spawnGslbd, stopAllGslbd, call, waitFor, type GslbdNode, type NatsServer } from '../helpers/nats.js';

const KEY = 'q'.repeat(64);
const H = { authorization: `Bearer ${KEY}` };
let servers: NatsServer[];
let nodes: GslbdNode[];

before(async () => {
  servers = await startNatsCluster(3);
  const urls = servers.map((s) => s.url);
  nodes = await Promise.all(['a', 'b', 'c'].map((id, i) => spawnGslbd(id, {
    enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '1500ms', config: { applyTimeout: '3s' },
    // each node lists "its" server first
    nats: { servers: [...urls.slice(i), ...urls.slice(0, i)] },
  }, {}, { GSLB_API_KEY: KEY })));
});

after(async () => {
  await stopAllGslbd();
  await stopAllNats();
});

const ledger = (n: GslbdNode) => {
  const db = new Database(join(n.dir, 'gslbd.db'), { readonly: true });
  try {
    return {
      applied: db.prepare('SELECT seq, revision FROM cluster_applied ORDER BY seq').all() as { seq: number; revision: string }[],
      dupRevisions: db.prepare('SELECT revision, COUNT(*) AS n FROM revisions GROUP BY revision HAVING n > 1').all(),
      outbox: (db.prepare('SELECT COUNT(*) AS n FROM cluster_outbox').get() as { n: number }).n,
    };
  } finally { db.close(); }
};

test('no config revision is lost or applied twice when a NATS server dies mid-run', async () => {
  for (const n of nodes) await waitFor(`${n.id} sees the cluster`, async () => (await call(n.url, 'GET', '/api/v1/cluster', undefined, H)).body.liveNodes?.length === 3, 20_000);
  // the stream is replicated on all three servers
  const nc = await connect({ servers: servers[0]!.url });
  let victim: NatsServer | undefined;
  try {
    const info = await (await jetstreamManager(nc)).streams.info('SVC_cfg');
    assert.equal(info.config.num_replicas, 3);
    // the hardest server to lose: the stream's leader
    victim = servers.find((s) => s.name === info.cluster?.leader) ?? servers[1]!;
  } finally { await nc.close(); }

  const made: string[] = [];
  const total = 30;
  for (let i = 0; i < total; i++) {
    if (i === 10) await victim!.kill('SIGKILL');
    const n = nodes[i % 3]!;
    const r = await call(n.url, 'POST', '/api/v1/pools', { name: `r3-${i}` }, H);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    made.push(r.body.id as string);
    await new Promise((res) => setTimeout(res, 40));
  }
  await waitFor('every node holds every pool', async () => {
    for (const n of nodes) {
      const ids = new Set(((await call(n.url, 'GET', '/api/v1/pools', undefined, H)).body as { id: string }[]).map((p) => p.id));
      if (!made.every((id) => ids.has(id)) || ids.size !== total) return false;
      if (ledger(n).applied.length !== total) return false;
    }
    return true;
  // bounded, with room for a stream leader election and a consumer restart on a loaded machine
  }, 80_000, 200);
  const ledgers = nodes.map(ledger);
  for (const [i, l] of ledgers.entries()) {
    assert.deepEqual(l.dupRevisions, [], `node ${nodes[i]!.id}: a revision applied twice`);
    assert.equal(new Set(l.applied.map((x) => x.revision)).size, total, `node ${nodes[i]!.id}: distinct revisions`);
    assert.equal(l.outbox, 0, `node ${nodes[i]!.id}: outbox drained`);
  }
  // all nodes applied the same revisions in the same stream order
  assert.deepEqual(ledgers[1]!.applied, ledgers[0]!.applied);
  assert.deepEqual(ledgers[2]!.applied, ledgers[0]!.applied);
  // the latest revision in KV SVC_CFG is the stream's last one
  const last = ledgers[0]!.applied.at(-1)!;
  const nc2 = await connect({ servers: servers.filter((s) => s !== victim).map((s) => s.url) });
  try {
    const kv = await new Kvm(nc2).open('SVC_CFG');
    await waitFor('latest revision in KV', async () => {
      const e = await kv.get('test-cluster.latest');
      const v = e?.json<{ revision: string; seq: number }>();
      return v?.seq === last.seq && v.revision === last.revision;
    // the recorder retries a failed write every second for up to a minute (config-latest.ts): a
    // KV request that times out during the stream leader election takes seconds on a loaded machine
    }, 60_000, 100);
  } finally { await nc2.close(); }
});
