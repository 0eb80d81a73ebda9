import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { Recorder } from '../helpers/recorder.js';
import type { AlertsInfo } from '../../runtime/alerts/part.js';

// The real schedule, three retries after the first attempt (2 s, 4 s, 8 s): this file takes about 15 s.
let flaky: Recorder, dead: Recorder, healthy: Recorder;
let d: TestDaemon;

before(async () => {
  flaky = new Recorder((n) => (n <= 3 ? 503 : 200));
  dead = new Recorder(() => 500);
  healthy = new Recorder(() => 200);
  const [f, x, h] = await Promise.all([flaky.start(), dead.start(), healthy.start()]);
  d = await startTestDaemon({ alerts: { webhooks: [{ url: `${f}/flaky` }, { url: `${x}/dead` }, { url: `${h}/ok` }] } } as never);
});
after(async () => {
  await d?.stop();
  await Promise.all([flaky.stop(), dead.stop(), healthy.stop()]);
});

test('retries after about 2 s, 4 s and 8 s: one success on the fourth attempt for the flaky receiver, one logged failure for the dead one', async () => {
  const t0 = Date.now();
  d.core.bus.emit('health_transition', { poolId: 'p1', ipAddress: '198.51.100.1', healthy: false, score: 0, timestamp: t0, rttMs: 0, node: 'test-node' });

  await healthy.waitFor(1, 2000);
  assert.ok(healthy.requests[0]!.at - t0 < 1500, 'a healthy receiver is not held up by failing ones');

  await flaky.waitFor(4, 20_000);
  await dead.waitFor(4, 20_000);
  await (d.core.ports.alerts as AlertsInfo).dispatcher.idle();

  const gaps = (r: Recorder) => r.requests.slice(1).map((x, i) => x.at - r.requests[i]!.at);
  for (const [name, r] of [['flaky', flaky], ['dead', dead]] as const) {
    const [g1, g2, g3] = gaps(r);
    assert.ok(g1! >= 1900 && g1! < 3500, `${name}: first wait ${g1} ms`);
    assert.ok(g2! >= 3900 && g2! < 5500, `${name}: second wait ${g2} ms`);
    assert.ok(g3! >= 7900 && g3! < 9500, `${name}: third wait ${g3} ms`);
  }
  assert.deepEqual(flaky.requests.map((r) => r.status), [503, 503, 503, 200], 'exactly one successful delivery');
  assert.deepEqual(flaky.requests.map((r) => r.raw), Array(4).fill(flaky.requests[0]!.raw), 'the same body each time');

  const failed = d.logs.lines.filter((l) => l.msg === 'alert delivery failed; giving up');
  assert.equal(failed.length, 1);
  assert.match(String(failed[0]!.target), /^webhook\[1\]/);
  assert.equal(failed[0]!.attempts, 4);
  assert.match(String(failed[0]!.detail), /answered 500/);

  // no retry storm: nothing more reaches the dead receiver
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(dead.requests.length, 4);
  const text = await d.core.metrics.metrics();
  assert.match(text, /gslbd_alerts_failed_total\{[^}]*target="webhook"[^}]*\} 1/);
  assert.match(text, /gslbd_alerts_sent_total\{[^}]*target="webhook"[^}]*\} 2/);
});
