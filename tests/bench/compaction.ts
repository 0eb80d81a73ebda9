/**
 * `node --import tsx tests/bench/compaction.ts`: how long a node that joins empty takes to catch up
 * with a config stream of N plans (docs/cluster.md "Compaction"), with a snapshot at the head of
 * the stream and without one. For each N in BENCH_COMPACT_PLANS (default `1000,10000`) and each
 * mode: one `nats-server -js` on loopback, in-process node A applies a REST-shaped history of N
 * plans (tests/helpers/config-plans.ts; with `snapshot`, `snapshotEvery` = N so A writes one
 * snapshot once it applied them, and purges the stream below it), then node B starts with an empty
 * database and is timed from its start until its ledger reaches A's last sequence. Prints one line
 * per run; BENCHMARKS.md "Config stream compaction" has the figures.
 */
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startNats, stopAllNats } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';
import { publishHistory, rowsDigest } from '../helpers/config-plans.js';
import type { ClusterState } from '../../runtime/cluster/cluster-state.js';

const SIZES = (process.env.BENCH_COMPACT_PLANS ?? '1000,10000').split(',').map(Number);
const LONG = { timeoutMs: 60 * 60_000, everyMs: 50 };
const clusterOf = (d: TestDaemon) => d.core.ports.cluster as ClusterState;

async function run(plans: number, snapshot: boolean): Promise<void> {
  const nats = await startNats();
  const nc = await connect({ servers: nats.url });
  const nodes: TestDaemon[] = [];
  try {
    const state = {
      enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '3s', nats: { servers: [nats.url] },
      config: { applyTimeout: '5s', snapshotEvery: snapshot ? plans : 0, snapshotInterval: '0s', snapshotKeep: 100 },
    };
    const a = await startTestDaemon({ node: { id: 'a' }, cluster: { id: 'bench' }, state, logging: { level: 'info' } } as never);
    nodes.push(a);
    const jsm = await jetstreamManager(nc);
    await waitUntil('the stream exists', async () => { try { return Boolean(await jsm.streams.info('SVC_cfg')); } catch { return false; } });
    const last = await publishHistory(jetstream(nc), 'svc.cfg.bench', 0, plans);
    await waitUntil('A applied the history', () => clusterOf(a).config().lastSeq === last, LONG);
    if (snapshot) {
      const kv = await new Kvm(jetstream(nc)).open('SVC_CFG');
      await waitUntil('the snapshot', async () => { const e = await kv.get('bench.snapshot'); return e?.operation === 'PUT' && (e.json<{ seq: number }>().seq === last); }, LONG);
    }
    const started = Date.now();
    const b = await startTestDaemon({ node: { id: 'b' }, cluster: { id: 'bench' }, state, logging: { level: 'info' } } as never);
    nodes.push(b);
    await waitUntil('B caught up', () => clusterOf(b).config().lastSeq === last, LONG);
    const joinMs = Date.now() - started;
    const same = rowsDigest(a.core.db).sha256 === rowsDigest(b.core.db).sha256;
    const messages = (await jsm.streams.info('SVC_cfg')).state.messages;
    const loaded = b.logs.lines.find((l) => l.msg === 'config snapshot applied; replaying the stream after it') as { ms: number } | undefined;
    console.log(`compaction plans=${plans} mode=${snapshot ? 'snapshot' : 'replay'} join=${joinMs}ms snapshotLoad=${loaded ? `${loaded.ms}ms` : '-'} streamMessages=${messages} rows=${rowsDigest(b.core.db).rows} sameRows=${same}`);
  } finally {
    for (const d of nodes) await d.stop().catch(() => undefined);
    await nc.close();
    await stopAllNats();
  }
}

for (const n of SIZES) for (const snapshot of [false, true]) await run(n, snapshot);
