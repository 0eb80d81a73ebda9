import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { Recorder } from '../helpers/recorder.js';
import { startHttpMember, stopHttpMember } from '../helpers/http-member.js';
import { tenantKey } from '../helpers/tenants.js';

// Alert targets as rows: one from a git manifest (operator tenant, webhook signed with a secret
// from the environment), others over REST by tenant `acme` (an incident service whose routing key
// comes from the environment, and a webhook whose filter matches nothing). Real members behind
// the real health checker go down; each receiver gets only its tenant's flips that match its
// filters, and no secret value ever appears in an API answer or a log line.
const OPS_IP = '127.0.0.51';
const ACME_IP = '127.0.0.52';
const HOOK_SECRET = `hook-${randomBytes(12).toString('hex')}`;
const ROUTING_KEY = `rk-${randomBytes(12).toString('hex')}`;
const SYS = randomBytes(32).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };

let fx: GitFixture;
let d: TestDaemon;
let opsMember: Server | undefined, acmeMember: Server | undefined;
let opsHook: Recorder, acmePd: Recorder, acmeQuiet: Recorder;
let acme: Record<string, string>;
let acmeTargetId = '';
let acmePoolId = '';
// every API answer of this file, to check that no secret value is ever returned
const answers: string[] = [];
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await api(d.url, method, path, body, headers);
  answers.push(JSON.stringify(r.body));
  return r;
}

const manifest = (hookUrl: string, port: number) => `apiVersion: gslb/v1
kind: Pool
metadata: {name: web}
spec:
  members: [{ipAddress: ${OPS_IP}, port: ${port}}]
  healthCheck: {type: http, port: ${port}, httpPath: /, intervalMs: 200, timeoutMs: 150}
---
apiVersion: gslb/v1
kind: AlertTarget
metadata: {name: ops-hook}
spec:
  type: webhook
  webhook:
    url: ${hookUrl}/ops
    secret: {env: GSLB_ALERT_OPS_HOOK}
  pools: [web]
  events: [health, apply]
`;

before(async () => {
  opsMember = await startHttpMember(OPS_IP);
  acmeMember = await startHttpMember(ACME_IP);
  opsHook = new Recorder(() => 200);
  acmePd = new Recorder(() => 202);
  acmeQuiet = new Recorder(() => 200);
  const [h, pd, quiet] = await Promise.all([opsHook.start(), acmePd.start(), acmeQuiet.start()]);
  fx = await startGitFixture();
  fx.repo.write('alerts.yaml', manifest(h, (opsMember.address() as AddressInfo).port));
  fx.repo.commit('web pool with an alert target', fx.ops);
  // the tenants' receivers are on loopback: the operator allows it (the SSRF guard, last test)
  d = await startTestDaemon({ gitops: fx.gitops, alerts: { allowPrivateTargets: ['127.0.0.0/8'] } } as never, {
    GSLB_API_KEY: SYS, GITOPS_WEBHOOK_SECRET: fx.webhookSecret, GSLBD_ALERT_RETRY_DELAYS_MS: '50,100',
    GSLB_ALERT_OPS_HOOK: HOOK_SECRET, GSLB_ALERT_ACME__PD: ROUTING_KEY,
  });
  const s = await call('POST', '/api/v1/gitops/reconcile', {}, sys);
  assert.equal(s.body.ready, true, JSON.stringify(s.body));

  acme = await tenantKey(d, 'acme', sys);
  const port = (acmeMember.address() as AddressInfo).port;
  acmePoolId = (await call('POST', '/api/v1/pools', { name: 'shop' }, acme)).body.id;
  assert.equal((await call('POST', `/api/v1/pools/${acmePoolId}/members`, { ipAddress: ACME_IP, port }, acme)).status, 201);
  assert.equal((await call('PUT', `/api/v1/pools/${acmePoolId}/healthcheck`, { type: 'http', port, httpPath: '/', intervalMs: 200, timeoutMs: 150 }, acme)).status, 200);
  const t = await call('POST', '/api/v1/alert-targets', { name: 'pager', type: 'oncall_a', oncall_a: { routingKey: { env: 'GSLB_ALERT_ACME__PD' }, baseUrl: pd }, pools: ['shop'] }, acme);
  assert.equal(t.status, 201, JSON.stringify(t.body));
  acmeTargetId = t.body.id;
  const q = await call('POST', '/api/v1/alert-targets', { name: 'quiet', type: 'webhook', webhook: { url: `${quiet}/q` }, pools: ['not-a-pool'] }, acme);
  assert.equal(q.status, 201, JSON.stringify(q.body));
  await new Promise((r) => setTimeout(r, 600)); // healthy probes first: no flip yet
});

after(async () => {
  await d?.stop();
  await stopHttpMember(opsMember);
  await stopHttpMember(acmeMember);
  await Promise.all([opsHook?.stop(), acmePd?.stop(), acmeQuiet?.stop()]);
  await fx?.close();
});

test('a git AlertTarget gets the applied revision, signed with the secret from the environment', async () => {
  const reqs = await opsHook.waitFor(1, 5000);
  const applied = reqs.find((r) => r.json?.type === 'gitops_applied');
  assert.ok(applied, JSON.stringify(reqs.map((r) => r.json)));
  assert.equal(applied.json.revision, fx.repo.head());
  assert.equal(applied.json.creates, 4); // pool, member, health check, alert target
  assert.equal(applied.headers['x-svc-signature'], `sha256=${createHmac('sha256', HOOK_SECRET).update(applied.raw).digest('hex')}`);
});

test('each tenant\'s receivers get only that tenant\'s flips matching their filters', async () => {
  const before = opsHook.requests.length;
  await stopHttpMember(opsMember);
  await stopHttpMember(acmeMember);
  opsMember = acmeMember = undefined;
  await opsHook.waitFor(before + 1, 10_000);
  await acmePd.waitFor(1, 10_000);
  await d.core.ports.alerts!.dispatcher.idle();
  await new Promise((r) => setTimeout(r, 300));

  const opsFlips = opsHook.requests.filter((r) => r.json?.ipAddress !== undefined);
  assert.deepEqual(opsFlips.map((r) => [r.json.ipAddress, r.json.healthy]), [[OPS_IP, false]], 'the operator\'s target sees only its pool');
  const sig = `sha256=${createHmac('sha256', HOOK_SECRET).update(opsFlips[0]!.raw).digest('hex')}`;
  assert.equal(opsFlips[0]!.headers['x-svc-signature'], sig);

  assert.equal(acmePd.requests.length, 1, JSON.stringify(acmePd.requests.map((r) => r.json)));
  const pd = acmePd.requests[0]!;
  assert.equal(pd.url, '/v2/enqueue');
  assert.equal(pd.json.routing_key, ROUTING_KEY, 'the routing key is read from the environment');
  assert.equal(pd.json.event_action, 'trigger');
  assert.equal(pd.json.dedup_key, `svc/${acmePoolId}/${ACME_IP}`);
  assert.equal(acmeQuiet.requests.length, 0, 'a filter naming no pool of the flip sends nothing');
});

test('POST /alert-targets/{id}/test sends a sample through the real sender; 404 for another tenant', async () => {
  const n = acmePd.requests.length;
  const r = await call('POST', `/api/v1/alert-targets/${acmeTargetId}/test`, undefined, acme);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.ok, true);
  const got = (await acmePd.waitFor(n + 1))[n]!;
  assert.equal(got.json.routing_key, ROUTING_KEY);
  assert.equal(got.json.event_action, 'resolve', 'the sample is a recovery: it pages nobody');
  assert.equal(got.json.dedup_key, 'svc/gslbd-test/192.0.2.1');

  const gitId = (await call('GET', '/api/v1/alert-targets', undefined, sys)).body.find((t: { name: string }) => t.name === 'ops-hook').id;
  assert.equal((await call('POST', `/api/v1/alert-targets/${gitId}/test`, undefined, acme)).status, 404);
  const sent = opsHook.requests.length;
  const own = await call('POST', `/api/v1/alert-targets/${gitId}/test`, undefined, sys);
  assert.equal(own.status, 200, JSON.stringify(own.body));
  assert.equal((await opsHook.waitFor(sent + 1))[sent]!.headers['x-svc-signature']?.toString().startsWith('sha256='), true);
  // e-mail goes through the tenant's own mail settings: none stored yet, so the sample is refused
  const mail = await call('POST', '/api/v1/alert-targets', { name: 'mail', type: 'email', email: { to: ['noc@acme.test'] } }, acme);
  assert.equal(mail.status, 201, JSON.stringify(mail.body));
  const m = await call('POST', `/api/v1/alert-targets/${mail.body.id}/test`, undefined, acme);
  assert.equal(m.status, 502);
  assert.match(m.body.error, /mail is not configured for this tenant/);
  // a receiver that refuses: 502 with its answer
  const bad = await call('POST', '/api/v1/alert-targets', { name: 'refused', type: 'webhook', webhook: { url: `${d.url}/nowhere` } }, acme);
  assert.equal(bad.status, 201);
  const t = await call('POST', `/api/v1/alert-targets/${bad.body.id}/test`, undefined, acme);
  assert.equal(t.status, 502);
  assert.match(t.body.error, /404/);
});

test('git rows are read-only over REST (409 naming the file); tenants see only their own targets', async () => {
  const list = (await call('GET', '/api/v1/alert-targets', undefined, sys)).body as { id: string; name: string; origin: string; source?: string }[];
  const git = list.find((t) => t.name === 'ops-hook')!;
  assert.equal(git.origin, 'git');
  assert.equal(git.source, 'alerts.yaml');
  const put = await call('PUT', `/api/v1/alert-targets/${git.id}`, { name: 'ops-hook', type: 'webhook', webhook: { url: 'http://127.0.0.1:9/' } }, sys);
  assert.equal(put.status, 409);
  assert.match(put.body.error, /alert target "ops-hook" is managed by git \(declared in alerts\.yaml/);
  const del = await call('DELETE', `/api/v1/alert-targets/${git.id}`, undefined, sys);
  assert.equal(del.status, 409);
  assert.match(del.body.error, /alerts\.yaml/);

  const mine = (await call('GET', '/api/v1/alert-targets', undefined, acme)).body as { name: string }[];
  assert.deepEqual(mine.map((t) => t.name).sort(), ['mail', 'pager', 'quiet', 'refused']);
  assert.equal((await call('GET', `/api/v1/alert-targets/${git.id}`, undefined, acme)).status, 404);
  const pager = (await call('GET', `/api/v1/alert-targets/${acmeTargetId}`, undefined, acme)).body;
  assert.deepEqual(pager.oncall_a.routingKey, { env: 'GSLB_ALERT_ACME__PD' }, 'a reference is shown as a reference');
  assert.equal(pager.oncall_a.severity, 'critical');
  assert.deepEqual(pager.events, ['health', 'rejection', 'rollback']);
});

test('references a tenant may not use, or this node cannot read, are refused at creation', async () => {
  const cases: { name: string; body: Record<string, unknown>; who: Record<string, string>; want: RegExp }[] = [
    { name: 'inline secret', body: { name: 'a', type: 'webhook', webhook: { url: 'http://127.0.0.1:9/', secret: 'plain' } }, who: acme, want: /secret/ },
    { name: 'the operator\'s variable', body: { name: 'b', type: 'webhook', webhook: { url: 'http://127.0.0.1:9/', secret: { env: 'GSLB_ALERT_OPS_HOOK' } } }, who: acme, want: /GSLB_ALERT_ACME__/ },
    { name: 'a daemon variable', body: { name: 'c', type: 'oncall_b', oncall_b: { apiKey: { env: 'GSLB_API_KEY' } } }, who: sys, want: /not allowed/ },
    { name: 'unset', body: { name: 'd', type: 'oncall_a', oncall_a: { routingKey: { env: 'GSLB_ALERT_ACME__NOPE' } } }, who: acme, want: /not set on this node/ },
    { name: 'file without secretDirs', body: { name: 'e', type: 'oncall_a', oncall_a: { routingKey: { file: '/etc/passwd' } } }, who: sys, want: /secretDirs is empty/ },
    { name: 'settings of another type', body: { name: 'f', type: 'email', webhook: { url: 'http://127.0.0.1:9/' } }, who: acme, want: /needs its settings/ },
    { name: 'duplicate name', body: { name: 'pager', type: 'email', email: { to: ['x@acme.test'] } }, who: acme, want: /already exists/ },
  ];
  for (const c of cases) {
    const r = await call('POST', '/api/v1/alert-targets', c.body, c.who);
    assert.ok(r.status === 400 || r.status === 409, `${c.name}: ${r.status}`);
    assert.match(r.body.error, c.want, c.name);
    assert.ok(!JSON.stringify(r.body).includes(SYS), c.name);
  }
});

test('no secret value in any API answer or log line', () => {
  const logs = d.logs.text();
  for (const s of [HOOK_SECRET, ROUTING_KEY, SYS]) assert.ok(!logs.includes(s), `a secret ending in ${s.slice(-4)} is in the logs`);
  assert.ok(answers.length > 15);
  for (const a of answers) assert.ok(!a.includes(HOOK_SECRET) && !a.includes(ROUTING_KEY), a);
});

test('a tenant\'s targets go through the SSRF guard (loopback refused unless alerts.allowPrivateTargets allows it); the operator\'s do not', async () => {
  const guarded = await startTestDaemon({} as never, { GSLB_API_KEY: SYS });
  const hook = new Recorder(() => 200);
  try {
    const h = (await tenantKey(guarded, 'beta', sys));
    const url = await hook.start();
    const t = await api(guarded.url, 'POST', '/api/v1/alert-targets', { name: 'inner', type: 'webhook', webhook: { url } }, h);
    assert.equal(t.status, 201, JSON.stringify(t.body));
    const r = await api(guarded.url, 'POST', `/api/v1/alert-targets/${t.body.id}/test`, undefined, h);
    assert.equal(r.status, 502);
    assert.match(r.body.error, /refused: 127\.0\.0\.1 is a private or reserved address/);
    // a host name that resolves to a private address is refused without saying what it resolves to
    const named = await api(guarded.url, 'POST', '/api/v1/alert-targets', { name: 'named', type: 'webhook', webhook: { url: url.replace('127.0.0.1', 'localhost') } }, h);
    assert.equal(named.status, 201, JSON.stringify(named.body));
    const byName = await api(guarded.url, 'POST', `/api/v1/alert-targets/${named.body.id}/test`, undefined, h);
    assert.equal(byName.status, 502);
    assert.match(byName.body.error, /refused: localhost resolves to a private or reserved address/);
    assert.ok(!/127\.0\.0\.1|::1/.test(byName.body.error as string), `the resolved address is not named: ${byName.body.error}`);
    assert.equal(hook.requests.length, 0, 'nothing reached the loopback receiver');
    const own = await api(guarded.url, 'POST', '/api/v1/alert-targets', { name: 'ops', type: 'webhook', webhook: { url } }, sys);
    assert.equal(own.status, 201);
    assert.equal((await api(guarded.url, 'POST', `/api/v1/alert-targets/${own.body.id}/test`, undefined, sys)).status, 200, 'the operator aims at its own hosts');
  } finally {
    await hook.stop();
    await guarded.stop();
  }
});
