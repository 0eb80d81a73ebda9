/**
 * `npm run bench:cluster`: how long a health flip takes to reach the other nodes of a cluster. One
 * `nats-server -js` on loopback and four in-process nodes (heartbeat 300 ms, as the cluster tests);
 * one node emits local flips the way the health monitor does, and each of the other three records
 * the local time it merged the flip into its peer view (`receivedAt` in GET /api/v1/cluster/health).
 * Latency = receivedAt − the flip's timestamp (one clock: the same host). Prints p50, p99 and max
 * over BENCH_CLUSTER_FLIPS flips (default 100) × 3 receivers. The target is 200 ms
 * (BENCHMARKS.md "Cluster"); tests/integration/cluster-three-nodes.test.ts prints the same figure
 * for 30 flips and holds only that every flip arrives.
 */
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startNats, stopAllNats } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';

const FLIPS = Number(process.env.BENCH_CLUSTER_FLIPS ?? 100);
const STATE = { enableConfigSync: false, heartbeatInterval: '300ms', heartbeatTTL: '1500ms', healthPolicy: 'local-only' };

const nats = await startNats();
const nodes: TestDaemon[] = [];
try {
  for (const id of ['src', 'r1', 'r2', 'r3']) {
    nodes.push(await startTestDaemon({ node: { id }, cluster: { id: 'bench-cluster' }, state: { ...STATE, nats: { servers: [nats.url] } } } as never));
  }
  const [src, ...receivers] = nodes as [TestDaemon, ...TestDaemon[]];
  for (const r of receivers) {
    await waitUntil(`${r.core.config.node.id} sees 4 nodes`, async () => (await api(r.url, 'GET', '/api/v1/cluster')).body.liveNodes?.length === 4);
  }
  const lat: number[] = [];
  for (let i = 0; i < FLIPS; i++) {
    const healthy = i % 2 === 0;
    const timestamp = Date.now();
    const e = { healthy, score: healthy ? 1 : 0, lastChecked: timestamp, rttMs: 3, node: 'src' };
    src.core.health.set('bench-pool', '10.9.0.1', e);
    src.core.bus.emit('health_transition', { poolId: 'bench-pool', ipAddress: '10.9.0.1', healthy, score: e.score, timestamp, rttMs: 3, node: 'src' });
    for (const r of receivers) {
      const entry = await waitUntil(`flip ${i} on ${r.core.config.node.id}`, async () => {
        const body = (await api(r.url, 'GET', '/api/v1/cluster/health?poolId=bench-pool&ipAddress=10.9.0.1')).body as { entries: { node: string; lastChecked: number; receivedAt: number }[] };
        return body.entries.find((x) => x.node === 'src' && x.lastChecked === timestamp);
      }, { everyMs: 2 });
      lat.push(entry.receivedAt - timestamp);
    }
  }
  lat.sort((a, b) => a - b);
  const at = (q: number) => lat[Math.min(lat.length - 1, Math.ceil(q * lat.length) - 1)]!;
  console.log(`cluster flip propagation: n=${lat.length} p50=${at(0.5)} ms p99=${at(0.99)} ms max=${lat.at(-1)} ms (target 200 ms)`);
} finally {
  for (const n of nodes) await n.stop().catch(() => undefined);
  await stopAllNats();
}
