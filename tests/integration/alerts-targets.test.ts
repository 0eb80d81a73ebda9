import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { Recorder } from '../helpers/recorder.js';
import { TestSmtp } from '../helpers/smtp.js';
import type { AlertsInfo } from '../../runtime/alerts/part.js';

const HOOK_SECRET = 'whsec-integration-1';
const ROUTING_KEY = 'rk-integration-2';
const GENIE_KEY = 'genie-integration-3';
let signed: Recorder, unsigned: Recorder, pd: Recorder, genie: Recorder, smtp: TestSmtp;
let d: TestDaemon;
const idle = () => (d.core.ports.alerts as AlertsInfo).dispatcher.idle();

before(async () => {
  signed = new Recorder(() => 200);
  unsigned = new Recorder(() => 204);
  pd = new Recorder(() => 202);
  genie = new Recorder(() => 202);
  smtp = new TestSmtp();
  const [s, u, p, g] = await Promise.all([signed.start(), unsigned.start(), pd.start(), genie.start(), smtp.start()]);
  d = await startTestDaemon({
    node: { id: 'node-a' },
    alerts: {
      webhooks: [{ url: `${s}/hooks/gslb`, secret: HOOK_SECRET }, { url: `${u}/plain` }],
      oncall_a: [{ routingKey: ROUTING_KEY, severity: 'error', baseUrl: p }],
      oncall_b: [{ apiKey: GENIE_KEY, priority: 'P2', region: 'eu', baseUrl: g }],
      smtp: [{ host: '127.0.0.1', port: smtp.port, from: 'gslbd@example.test', to: ['ops@example.test', 'noc@example.test'], startTls: false }],
    },
  } as never);
});
after(async () => {
  await d?.stop();
  await Promise.all([signed.stop(), unsigned.stop(), pd.stop(), genie.stop(), smtp.stop()]);
});

test('a flip down then up reaches every target with the exact shapes', async () => {
  const t0 = 1_763_700_000_250;
  d.core.bus.emit('health_transition', { poolId: 'pool-web', ipAddress: '192.0.2.10', healthy: false, score: 0, timestamp: t0, rttMs: 0, node: 'node-a' });
  d.core.bus.emit('health_transition', { poolId: 'pool-web', ipAddress: '192.0.2.10', healthy: true, score: 1, timestamp: t0 + 30_000, rttMs: 4, node: 'node-a' });
  await Promise.all([signed.waitFor(2), unsigned.waitFor(2), pd.waitFor(2), genie.waitFor(2), smtp.waitFor(1)]);
  await idle();

  // webhooks: exact body, seconds, signature over the raw body
  const [w1, w2] = signed.requests;
  assert.equal(w1!.method, 'POST');
  assert.equal(w1!.url, '/hooks/gslb');
  assert.equal(w1!.headers['content-type'], 'application/json');
  // the four specified fields, then what the node serves (nothing applied yet on this daemon)
  assert.deepEqual(w1!.json, { poolId: 'pool-web', ipAddress: '192.0.2.10', healthy: false, timestamp: 1_763_700_000, appliedCommit: null, secondsSinceApply: null });
  assert.deepEqual(w2!.json, { poolId: 'pool-web', ipAddress: '192.0.2.10', healthy: true, timestamp: 1_763_700_030, appliedCommit: null, secondsSinceApply: null });
  for (const w of [w1!, w2!]) {
    const want = `sha256=${createHmac('sha256', HOOK_SECRET).update(w.raw).digest('hex')}`;
    assert.equal(w.headers['x-svc-signature'], want);
  }
  assert.equal(unsigned.requests[0]!.headers['x-svc-signature'], undefined, 'no secret, no signature');
  assert.deepEqual(unsigned.requests.map((r) => r.json.healthy), [false, true]);

  // oncall_a: Events API v2
  const [trig, res] = pd.requests;
  assert.equal(trig!.url, '/v2/enqueue');
  assert.equal(res!.url, '/v2/enqueue');
  assert.deepEqual(
    { routing_key: trig!.json.routing_key, event_action: trig!.json.event_action, dedup_key: trig!.json.dedup_key, severity: trig!.json.payload.severity, source: trig!.json.payload.source },
    { routing_key: ROUTING_KEY, event_action: 'trigger', dedup_key: 'svc/pool-web/192.0.2.10', severity: 'error', source: 'node-a' });
  assert.match(trig!.json.payload.summary, /192\.0\.2\.10.*pool-web.*unhealthy/);
  assert.equal(trig!.json.payload.timestamp, new Date(t0).toISOString());
  assert.deepEqual(
    { event_action: res!.json.event_action, dedup_key: res!.json.dedup_key, severity: res!.json.payload.severity },
    { event_action: 'resolve', dedup_key: 'svc/pool-web/192.0.2.10', severity: 'info' });

  // oncall_b: create then close by alias, GenieKey auth
  const [create, close] = genie.requests;
  assert.equal(create!.url, '/v2/alerts');
  assert.equal(create!.headers.authorization, `GenieKey ${GENIE_KEY}`);
  assert.equal(create!.json.alias, 'svc/pool-web/192.0.2.10');
  assert.equal(create!.json.priority, 'P2');
  assert.ok(create!.json.message.length <= 130);
  assert.equal(close!.url, '/v2/alerts/svc%2Fpool-web%2F192.0.2.10/close?identifierType=alias');
  assert.equal(close!.headers.authorization, `GenieKey ${GENIE_KEY}`);

  // mail: to the `to` recipients of the active settings
  const mails = await smtp.waitFor(1);
  const all = mails.map((m) => `${m.subject}\n${m.text}`).join('\n');
  for (const m of mails) assert.deepEqual(m.rcptTo, ['ops@example.test', 'noc@example.test']);
  assert.match(all, /192\.0\.2\.10/);
  assert.match(all, /UNHEALTHY/);
  assert.match(all, /HEALTHY/);

  const logs = d.logs.text();
  for (const secret of [HOOK_SECRET, ROUTING_KEY, GENIE_KEY]) assert.ok(!logs.includes(secret), `${secret} not logged`);
  assert.equal(d.logs.lines.filter((l) => l.msg === 'alert delivered').length >= 8, true);
});

test('a GitOps rejection alerts once per revision and reason, with its own type and keys', async () => {
  const before = { s: signed.requests.length, p: pd.requests.length, g: genie.requests.length, m: smtp.messages.length };
  const rej = { revision: 'c0ffee1234567890c0ffee1234567890c0ffee12', reason: 'SignatureInvalid', message: 'commit c0ffee12 is not signed by an allowed key' };
  d.core.bus.emit('gitops_rejected', rej);
  d.core.bus.emit('gitops_rejected', rej); // the loop retrying the same bad commit
  await Promise.all([signed.waitFor(before.s + 1), pd.waitFor(before.p + 1), genie.waitFor(before.g + 1), smtp.waitFor(before.m + 1)]);
  await idle();
  assert.equal(signed.requests.length, before.s + 1, 'repeat suppressed');
  const w = signed.requests.at(-1)!;
  assert.deepEqual({ ...w.json, timestamp: typeof w.json.timestamp }, { type: 'gitops_rejected', ...rej, timestamp: 'number', appliedCommit: null, secondsSinceApply: null });
  assert.equal(w.headers['x-svc-signature'], `sha256=${createHmac('sha256', HOOK_SECRET).update(w.raw).digest('hex')}`);
  const p = pd.requests.at(-1)!.json;
  assert.deepEqual([p.event_action, p.dedup_key, p.payload.severity, p.payload.class], ['trigger', `svc/gitops/${rej.revision}`, 'error', 'gitops']);
  assert.equal(genie.requests.at(-1)!.json.alias, `svc/gitops/${rej.revision}`);
  const m = smtp.messages.at(-1)!;
  assert.match(m.subject, /GitOps revision c0ffee123456 rejected: SignatureInvalid/);
  assert.match(m.text, /not signed by an allowed key/);
});

test('metrics count deliveries per target type', async () => {
  const text = await d.core.metrics.metrics();
  for (const t of ['webhook', 'oncall_a', 'oncall_b', 'mail']) assert.match(text, new RegExp(`gslbd_alerts_sent_total\\{[^}]*target="${t}"[^}]*\\} [1-9]`), t);
});
