/** Without `state.nats.servers` the cluster part leaves the node self-contained. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDaemon, api } from '../helpers/daemon.js';
import { MemorySessionStore } from '../../runtime/ports/sessions.js';
import type { GitLeader } from '../../runtime/cluster/lease.js';

test('single node: memory stores, always git leader, local policy, cluster status says disabled', async () => {
  const d = await startTestDaemon({ state: { healthPolicy: 'global-quorum' } });
  try {
    assert.ok(d.core.sessions instanceof MemorySessionStore);
    assert.equal((d.core.ports.gitLeader as GitLeader).holds(), true);
    d.core.health.set('p', '10.0.0.1', { healthy: false, score: 0, lastChecked: 1, rttMs: 0, node: 'test-node' });
    assert.equal(d.core.health.isHealthy('p', '10.0.0.1'), false, 'the local result decides');
    assert.equal(d.core.health.isHealthy('p', '10.0.0.2'), true, 'never probed: optimistic');
    const st = await api(d.url, 'GET', '/api/v1/cluster');
    assert.equal(st.status, 200);
    assert.equal(st.body.enabled, false);
    assert.deepEqual(st.body.liveNodes, ['test-node']);
    assert.equal(st.body.gitLeader.holds, true);
    const metrics = await d.core.metrics.getSingleMetricAsString('gslbd_state_nats_connected');
    assert.match(metrics, / 0$/m);
  } finally {
    await d.stop();
  }
});
