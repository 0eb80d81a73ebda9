import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { Recorder } from '../helpers/recorder.js';
import type { AlertsInfo } from '../../runtime/alerts/part.js';

let hook: Recorder;
let d: TestDaemon;

before(async () => {
  hook = new Recorder(() => 200);
  const url = await hook.start();
  d = await startTestDaemon({ alerts: { webhooks: [{ url: `${url}/burst` }] } } as never);
});
after(async () => {
  await d?.stop();
  await hook.stop();
});

test('300 flips at once: 256 delivered, the overflow dropped with a warning, the daemon keeps serving', async () => {
  const t0 = Date.now();
  for (let i = 0; i < 300; i++) {
    d.core.bus.emit('health_transition', { poolId: 'p-burst', ipAddress: `10.9.${i >> 8}.${i & 255}`, healthy: i % 2 === 0, score: 0, timestamp: t0, rttMs: 0, node: 'test-node' });
  }
  // the API answers while the queue drains
  const status = await api(d.url, 'GET', '/api/v1/pools');
  assert.equal(status.status, 200);

  await hook.waitFor(256, 30_000);
  await (d.core.ports.alerts as AlertsInfo).dispatcher.idle();
  assert.equal(hook.requests.length, 256);
  // FIFO: the first 256 events are the ones delivered
  assert.deepEqual(hook.requests.map((r) => r.json.ipAddress), Array.from({ length: 256 }, (_, i) => `10.9.${i >> 8}.${i & 255}`));

  const warns = d.logs.lines.filter((l) => l.msg === 'alert queue full; event dropped');
  assert.ok(warns.length >= 1);
  assert.equal(warns[0]!.level, 40);
  const text = await d.core.metrics.metrics();
  assert.match(text, /gslbd_alerts_dropped_total\{[^}]*target="webhook"[^}]*\} 44/);
  assert.match(text, /gslbd_alerts_sent_total\{[^}]*target="webhook"[^}]*\} 256/);
  assert.equal((await api(d.url, 'GET', '/api/v1/pools')).status, 200);
});
