import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { Recorder } from '../helpers/recorder.js';
import { TestSmtp } from '../helpers/smtp.js';
import { startHttpMember, stopHttpMember } from '../helpers/http-member.js';

// A real member behind the real health checker: its HTTP server stops, then comes back.
const MEMBER_IP = '127.0.0.31';
let member: Server | undefined;
let memberPort = 0;
let hook: Recorder, pd: Recorder, smtp: TestSmtp;
let d: TestDaemon;

const startMember = (port = 0): Promise<Server> => startHttpMember(MEMBER_IP, port);
async function stopMember(): Promise<void> {
  await stopHttpMember(member);
  member = undefined;
}
before(async () => {
  member = await startMember();
  memberPort = (member.address() as AddressInfo).port;
  hook = new Recorder(() => 200);
  pd = new Recorder(() => 202);
  smtp = new TestSmtp();
  const [h, p] = await Promise.all([hook.start(), pd.start(), smtp.start()]);
  d = await startTestDaemon({
    alerts: {
      webhooks: [{ url: `${h}/gslb`, secret: 'e2e-secret' }],
      oncall_a: [{ routingKey: 'e2e-routing-key', baseUrl: p }],
      smtp: [{ host: '127.0.0.1', port: smtp.port, from: 'gslbd@example.test', to: ['ops@example.test'], startTls: false }],
    },
  } as never);
});
after(async () => {
  await d?.stop();
  await stopMember();
  await Promise.all([hook.stop(), pd.stop(), smtp.stop()]);
});

test('member HTTP server stopped → webhook, trigger and mail; restarted → resolve messages', async () => {
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'e2e' })).body as { id: string };
  assert.ok(pool.id);
  const m = await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: MEMBER_IP, port: memberPort });
  assert.equal(m.status, 201, JSON.stringify(m.body));
  const hc = await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'http', port: memberPort, httpPath: '/', intervalMs: 200, timeoutMs: 150 });
  assert.equal(hc.status, 200, JSON.stringify(hc.body));
  await new Promise((r) => setTimeout(r, 600)); // a few good probes first: no alert for a healthy start
  assert.equal(hook.requests.length, 0, 'no alert without a transition');

  await stopMember();
  await hook.waitFor(1, 10_000);
  await pd.waitFor(1, 5000);
  await smtp.waitFor(1, 5000);
  // REST writes only: no commit, but the seconds since the last of them
  const since = hook.requests[0]!.json.secondsSinceApply as number;
  assert.ok(Number.isInteger(since) && since >= 0 && since < 60, String(since));
  assert.deepEqual({ ...hook.requests[0]!.json, timestamp: 0 }, { poolId: pool.id, ipAddress: MEMBER_IP, healthy: false, timestamp: 0, appliedCommit: null, secondsSinceApply: since });
  assert.equal(pd.requests[0]!.json.event_action, 'trigger');
  assert.equal(pd.requests[0]!.json.dedup_key, `svc/${pool.id}/${MEMBER_IP}`);
  assert.deepEqual(smtp.messages[0]!.rcptTo, ['ops@example.test']);
  assert.match(smtp.messages[0]!.subject, new RegExp(`DOWN: ${MEMBER_IP.replace(/\./g, '\\.')}`));

  member = await startMember(memberPort);
  await hook.waitFor(2, 10_000);
  await pd.waitFor(2, 5000);
  await smtp.waitFor(2, 5000);
  assert.equal(hook.requests[1]!.json.healthy, true);
  assert.equal(pd.requests[1]!.json.event_action, 'resolve');
  assert.equal(pd.requests[1]!.json.dedup_key, `svc/${pool.id}/${MEMBER_IP}`);
  assert.equal(pd.requests[1]!.json.payload.severity, 'info');
  assert.match(smtp.messages[1]!.subject, /RECOVERED/);
  await new Promise((r) => setTimeout(r, 500)); // steady healthy probes: nothing more
  assert.equal(hook.requests.length, 2, 'one alert per transition, none while steady');
});
