/**
 * Alerts of the cluster (docs/alerts.md "Once per cluster", "The queue"): a rejected revision seen
 * by three nodes of one cluster reaches the receiver once; an alert queued when its node stopped
 * is delivered after the node starts again on the same database.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNats, stopAllNats, waitFor } from '../helpers/nats.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { Recorder } from '../helpers/recorder.js';
import type { ClusterState } from '../../runtime/cluster/cluster-state.js';

const daemons: TestDaemon[] = [];
const recorders: Recorder[] = [];
const dirs: string[] = [];
after(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  await Promise.all(recorders.map((r) => r.stop()));
  await stopAllNats();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const STATE = { enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '1500ms' };
const rejection = { revision: 'c0ffee'.repeat(6) + 'abcd', reason: 'ValidationFailed', message: 'pools/web.yaml: spec.members[0].port: must be <= 65535' };

test('a rejected revision seen by three nodes alerts once', async () => {
  const nats = await startNats('alerts');
  const hook = new Recorder(() => 200);
  recorders.push(hook);
  const url = await hook.start();
  for (const id of ['a', 'b', 'c']) {
    const d = await startTestDaemon({ node: { id }, cluster: { id: 'alerts' }, state: { ...STATE, nats: { servers: [nats.url] } }, alerts: { webhooks: [{ url: `${url}/hook` }] } } as never);
    daemons.push(d);
    await waitFor(`${id} connected`, () => (d.core.ports.cluster as ClusterState).connected());
  }
  // each node sees the event (as after a change of git leader); one sends it
  for (const d of daemons) d.core.bus.emit('gitops_rejected', rejection);
  await hook.waitFor(1, 30_000);
  for (const d of daemons) {
    await waitFor(`${d.core.config.node.id} settled`, () => (d.core.db.prepare('SELECT COUNT(*) AS n FROM alert_queue').get() as { n: number }).n === 0);
    await d.core.ports.alerts!.dispatcher.idle();
  }
  assert.equal(hook.requests.length, 1, JSON.stringify(hook.requests.map((r) => r.json)));
  assert.equal(hook.requests[0]!.json.revision, rejection.revision);
  // a health flip stays per node: each node alerts on its own probes
  for (const d of daemons) d.core.bus.emit('health_transition', { poolId: 'p', ipAddress: '127.0.0.9', healthy: false, timestamp: Date.now(), node: d.core.config.node.id, score: 0, rttMs: 0 });
  await hook.waitFor(4, 30_000);
});

test('an alert queued when the node stopped is delivered after its restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-alert-queue-'));
  dirs.push(dir);
  let up = false;
  const hook = new Recorder(() => (up ? 200 : 503));
  recorders.push(hook);
  const url = await hook.start();
  const cfg = { node: { id: 'q' }, database: { path: join(dir, 'gslbd.db') }, alerts: { webhooks: [{ url: `${url}/hook` }] } } as never;
  // long waits between attempts: the event is still queued when the node stops
  const env = { GSLBD_ALERT_RETRY_DELAYS_MS: '60000,60000,60000' };
  const first = await startTestDaemon(cfg, env);
  first.core.bus.emit('gitops_rejected', rejection);
  await hook.waitFor(1, 30_000);
  assert.equal((first.core.db.prepare('SELECT COUNT(*) AS n FROM alert_queue').get() as { n: number }).n, 1);
  await first.close();
  up = true;
  const second = await startTestDaemon(cfg, env);
  daemons.push(second);
  await hook.waitFor(2, 30_000);
  assert.equal(hook.requests[1]!.status, 200);
  assert.equal(hook.requests[1]!.json.revision, rejection.revision);
  await waitFor('queue empty', () => (second.core.db.prepare('SELECT COUNT(*) AS n FROM alert_queue').get() as { n: number }).n === 0);
});
