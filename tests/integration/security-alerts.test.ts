import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/proc.js';
import { Recorder } from '../helpers/recorder.js';
import { TestSmtp } from '../helpers/smtp.js';
import { ALERT_RETRY_DELAYS_MS } from '../../runtime/alerts/dispatcher.js';
import { ALERT_RETRY_ENV } from '../../runtime/alerts/retry-schedule.js';
import { startHttpMember, stopHttpMember } from '../helpers/http-member.js';
import { WAIT_CEILING_MS, waitUntil } from '../helpers/wait.js';

// Alert delivery isolation through the real daemon and the real health checker: among the
// targets are a receiver that refuses connections, one that accepts and never answers, and one
// that always answers 503. The healthy receivers must get every flip, in order, while the hanging
// receiver still holds its first event (a queue shared with it would hold them for its 10 s
// deadline and the retries after it), and the failing ones must be tried exactly 1 + 3 retries times per event
// (gslb-config-auth.md §6, §8). The schedule is the real one scaled down 20× through the
// environment, so the file takes seconds rather than minutes.

/** Accepts TCP connections and reads requests but never answers them. */
class HangingReceiver {
  readonly sockets: Socket[] = [];
  /** connections on which a request arrived */
  requests = 0;
  private server: TcpServer | undefined;
  async start(): Promise<string> {
    this.server = createTcpServer((s) => {
      this.sockets.push(s);
      let seen = false;
      s.on('data', () => { if (!seen) { seen = true; this.requests++; } });
      s.on('error', () => {});
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

const SCALE = 20;
const delays = ALERT_RETRY_DELAYS_MS.map((ms) => ms / SCALE);
const MEMBER_IP = '127.0.0.34';
const FLIPS = 4;

let d: TestDaemon;
let ok1: Recorder, ok2: Recorder, okA: Recorder, okB: Recorder, failing: Recorder, smtp: TestSmtp, hanging: HangingReceiver;
let member: Server | undefined;
let memberPort = 0;
const flips: { at: number; healthy: boolean }[] = [];

const startMember = (port = 0): Promise<Server> => startHttpMember(MEMBER_IP, port);
async function stopMember(): Promise<void> {
  await stopHttpMember(member);
  member = undefined;
}
/** the hanging receiver's targets */
const HANGING = /^(webhook\[2\]|oncall_a\[0\])/;
const HANGING_LANES = [/^webhook\[2\]/, /^oncall_a\[0\]/];
const logsOf = (msg: string, target: RegExp) => d.logs.lines.filter((l) => l.msg === msg && target.test(String(l.target)));

before(async () => {
  [ok1, ok2, okA, okB] = [new Recorder(() => 200), new Recorder(() => 204), new Recorder(() => 202), new Recorder(() => 202)];
  failing = new Recorder(() => 503);
  smtp = new TestSmtp();
  hanging = new HangingReceiver();
  const [u1, u2, ua, ub, uf, uh] = await Promise.all([ok1.start(), ok2.start(), okA.start(), okB.start(), failing.start(), hanging.start(), smtp.start()]);
  const refused = `http://127.0.0.1:${await freePort()}`; // bound then released: connections are refused
  member = await startMember();
  memberPort = (member.address() as AddressInfo).port;
  d = await startTestDaemon({
    alerts: {
      webhooks: [{ url: `${u1}/ok` }, { url: `${refused}/refused` }, { url: `${uh}/hang` }, { url: `${uf}/fail` }, { url: `${u2}/ok` }],
      oncall_a: [{ routingKey: 'rk-hanging', baseUrl: uh }, { routingKey: 'rk-ok', baseUrl: ua }],
      oncall_b: [{ apiKey: 'key-refused', priority: 'P2', region: 'eu', baseUrl: refused }, { apiKey: 'key-ok', priority: 'P2', region: 'eu', baseUrl: ub }],
      smtp: [{ host: '127.0.0.1', port: smtp.port, from: 'gslbd@example.test', to: ['ops@example.test'], startTls: false }],
    },
  } as never, { [ALERT_RETRY_ENV]: delays.join(',') });
  d.core.bus.on('health_transition', (t) => flips.push({ at: Date.now(), healthy: t.healthy }));
});
after(async () => {
  await d?.stop();
  await stopMember();
  await Promise.all([ok1, ok2, okA, okB, failing].map((r) => r?.stop()));
  await Promise.all([smtp?.stop(), hanging?.stop()]);
});

test('a refused, a hanging and a failing receiver do not delay the healthy ones', async () => {
  assert.equal(delays.length, 3, 'the specified schedule is three retries after the first attempt');
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'isolation' })).body as { id: string };
  assert.equal((await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: MEMBER_IP, port: memberPort })).status, 201);
  assert.equal((await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'http', port: memberPort, httpPath: '/', intervalMs: 250, timeoutMs: 250 })).status, 200);
  // healthy probes first (two of them): no alert for a healthy start
  const checked = () => d.core.health.get(pool.id, MEMBER_IP)?.lastChecked ?? 0;
  const first = await waitUntil('the first probe of the member', () => checked());
  await waitUntil('a second probe of the member', () => checked() > first);
  assert.equal(flips.length, 0);

  const healthy = [['webhook[0]', ok1], ['webhook[4]', ok2], ['oncall_a[1]', okA], ['oncall_b[1]', okB]] as const;
  // the test SMTP server keeps no times: note when each message is first seen
  const mailAt: number[] = [];
  const watch = setInterval(() => { while (mailAt.length < smtp.messages.length) mailAt.push(Date.now()); }, 5);
  const lags: number[] = [];
  try {
    for (let i = 0; i < FLIPS; i++) await flipAndCheck(i);
  } finally {
    clearInterval(watch);
  }
  console.log(`# healthy receivers and mail: each flip arrived after ${lags.join(', ')} ms`);
  async function flipAndCheck(i: number): Promise<void> {
    if (member) await stopMember(); else member = await startMember(memberPort);
    await waitUntil(`flip ${i + 1}`, () => flips.length > i, { everyMs: 10, describe: () => `flips seen: ${flips.length}` });
    const flip = flips[i]!;
    assert.equal(flip.healthy, i % 2 === 1, `flip ${i + 1} direction`);
    for (const [name, r] of healthy) {
      await r.waitFor(i + 1, WAIT_CEILING_MS, `${name}: flip ${i + 1}`);
      lags.push(r.requests[i]!.at - flip.at);
    }
    await waitUntil(`mail for flip ${i + 1}`, () => mailAt.length > i, { everyMs: 10 });
    lags.push(mailAt[i]! - flip.at);
    // How soon is printed below; what it rests on is asserted: the healthy receivers have flip
    // i + 1 while each hanging lane has finished fewer events (an attempt there ends only at its
    // 10 s deadline), so nothing waited for a hanging lane.
    for (const lane of HANGING_LANES) {
      const finished = logsOf('alert delivered', lane).length + logsOf('alert delivery failed; giving up', lane).length;
      assert.ok(finished < i + 1, `flip ${i + 1} reached the healthy receivers after ${lane} finished ${finished} events`);
    }
    // let the failing receivers start their retries before the next flip
    await new Promise((r) => setTimeout(r, 400));
  }

  // order within each healthy target: the flips as they happened (trigger before resolve)
  const want = flips.map((f) => f.healthy);
  for (const r of [ok1, ok2]) assert.deepEqual(r.requests.map((x) => x.json.healthy), want);
  assert.deepEqual(okA.requests.map((x) => x.json.event_action), want.map((h) => (h ? 'resolve' : 'trigger')));
  assert.deepEqual(okB.requests.map((x) => x.url.endsWith('/close?identifierType=alias')), want);
  assert.deepEqual(smtp.messages.map((m) => /RECOVERED/.test(m.subject)), want);

  // the 503 receiver: exactly four attempts per event, the same body each time, events in order
  const attempts = delays.length + 1;
  await failing.waitFor(FLIPS * attempts, WAIT_CEILING_MS, 'the 503 receiver\'s attempts');
  await new Promise((r) => setTimeout(r, delays.at(-1)! * 2)); // nothing more arrives
  assert.equal(failing.requests.length, FLIPS * attempts);
  for (let i = 0; i < FLIPS; i++) {
    const bodies = failing.requests.slice(i * attempts, (i + 1) * attempts).map((x) => x.raw);
    assert.deepEqual(bodies, Array(attempts).fill(bodies[0]), `event ${i + 1}: one body for every attempt`);
    assert.equal(JSON.parse(bodies[0]!).healthy, want[i]);
  }

  // the refused receivers: four attempts per event, then one error line per event
  for (const target of [/^webhook\[1\]/, /^oncall_b\[0\]/]) {
    await waitUntil(`${target} to give up ${FLIPS} times`, () => logsOf('alert delivery failed; giving up', target).length >= FLIPS, { describe: () => `gave up ${logsOf('alert delivery failed; giving up', target).length} times` });
    const gaveUp = logsOf('alert delivery failed; giving up', target);
    assert.equal(gaveUp.length, FLIPS, `${target}: one give-up per event`);
    assert.deepEqual(gaveUp.map((l) => l.attempts), Array(FLIPS).fill(attempts));
    assert.equal(logsOf('alert delivery failed; will retry', target).length, FLIPS * delays.length);
  }

  // the hanging receiver holds only its own queue: still on its first event
  assert.ok(hanging.requests >= 1);
  assert.equal(logsOf('alert delivered', HANGING).length, 0);
  for (const secret of ['rk-hanging', 'rk-ok', 'key-refused', 'key-ok']) assert.ok(!d.logs.text().includes(secret), `${secret} not logged`);
});

test('shutdown does not wait for a receiver that never answers', async () => {
  const hang = new HangingReceiver();
  const url = await hang.start();
  const one = await startTestDaemon({ alerts: { webhooks: [{ url: `${url}/hang` }] } } as never);
  try {
    one.core.bus.emit('health_transition', { poolId: 'p-hang', ipAddress: '192.0.2.7', healthy: false, score: 0, timestamp: Date.now(), rttMs: 0, node: 'test-node' });
    await waitUntil('the request to reach the receiver', () => hang.requests > 0);
    assert.equal(hang.requests, 1, 'the request is in flight');
    const t0 = Date.now();
    await one.stop();
    // Shutdown gives deliveries in flight a 2 s grace, then aborts them. The only other way this
    // request could end is its 10 s deadline, so the bound is that deadline (five times the
    // grace), not a guess at the machine's speed: a stop that waited for the receiver reaches it.
    assert.ok(Date.now() - t0 < 10_000, `stop took ${Date.now() - t0} ms: it waited for the request's deadline`);
  } finally {
    await hang.stop();
  }
});
