import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { tenantKey as makeTenantKey } from '../helpers/tenants.js';

// Name ownership across tenants (docs/api.md "Name ownership"): two tenants, the system key, the
// real HTTP server and real `dig`. Tenant `alpha` owns the delegated suffix alpha.example.test.
// and was first on www.a.example.; tenant `beta` tries to take, shadow or inspect them.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
const DELEGATED = { suffix: 'alpha.example.test', tenant: 'alpha' };
const config = (delegations: unknown[], requireDelegation = false) => ({
  dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' },
  tenancy: { delegations, requireDelegation },
}) as never;

type H = Record<string, string>;

/** A tenant and a key for it, made with the system key. */
const tenantKey = (d: TestDaemon, id: string): Promise<H> => makeTenantKey(d, id, sys);

/** A pool with one member, as `h`. */
async function pool(d: TestDaemon, h: H, ip: string): Promise<string> {
  const p = await api(d.url, 'POST', '/api/v1/pools', { name: `p-${ip}` }, h);
  assert.equal(p.status, 201, JSON.stringify(p.body));
  assert.equal((await api(d.url, 'POST', `/api/v1/pools/${p.body.id}/members`, { ipAddress: ip, port: 80 }, h)).status, 201);
  return p.body.id as string;
}

async function service(d: TestDaemon, h: H, name: string, domain: string, poolId: string | null) {
  return api(d.url, 'POST', '/api/v1/services', { name, domain, poolId }, h);
}

async function answers(d: TestDaemon, name: string): Promise<{ status: string; answers: string[] }> {
  const r = await dig(d.ports.dnsPort as number, [name, 'A']);
  return { status: r.status, answers: r.answers };
}

test('names across tenants: reserved, delegated, first come; DNS answers the owner; simulate and 409s reveal nothing', async (t) => {
  const d = await startTestDaemon(config([DELEGATED]), { GSLB_API_KEY: SYS });
  t.after(() => d.stop());
  const alpha = await tenantKey(d, 'alpha');
  const beta = await tenantKey(d, 'beta');
  const ap = await pool(d, alpha, '127.0.0.10');
  const bp = await pool(d, beta, '127.0.0.20');
  const aWww = await service(d, alpha, 'alpha-www', 'www.a.example.', ap);
  assert.equal(aWww.status, 201, JSON.stringify(aWww.body));
  assert.equal((await service(d, alpha, 'alpha-shop', 'shop.alpha.example.test.', ap)).status, 201, 'the owner uses its delegation');
  const bOwn = await service(d, beta, 'beta-own', 'www.b.example.', bp);
  assert.equal(bOwn.status, 201);

  // every attack, refused with the documented status and body
  const attacks: { name: string; method?: string; domain: string; status: number; error: string }[] = [
    { name: 'same name', domain: 'www.a.example.', status: 409, error: 'domain www.a.example. is not available' },
    { name: 'same name, other case', domain: 'WWW.A.Example.', status: 409, error: 'domain www.a.example. is not available' },
    { name: 'under another tenant\'s service', domain: 'x.www.a.example.', status: 409, error: 'domain x.www.a.example. is not available' },
    { name: 'above another tenant\'s service', domain: 'a.example.', status: 409, error: 'domain a.example. is not available' },
    { name: 'the dns.domain apex', domain: 'example.test.', status: 403, error: 'name example.test. is reserved' },
    { name: 'the default name server', domain: 'ns1.example.test.', status: 403, error: 'name ns1.example.test. is reserved' },
    { name: 'another tenant\'s delegation', domain: 'www.alpha.example.test.', status: 403, error: 'name www.alpha.example.test. is not delegated to your tenant' },
    { name: 'another tenant\'s delegated suffix itself', domain: 'alpha.example.test.', status: 403, error: 'name alpha.example.test. is not delegated to your tenant' },
    { name: 'rename into another tenant\'s subtree', method: 'PUT', domain: 'x.www.a.example.', status: 409, error: 'domain x.www.a.example. is not available' },
    { name: 'rename into another tenant\'s delegation', method: 'PUT', domain: 'shop.alpha.example.test.', status: 403, error: 'name shop.alpha.example.test. is not delegated to your tenant' },
  ];
  for (const a of attacks) {
    const r = a.method === 'PUT'
      ? await api(d.url, 'PUT', `/api/v1/services/${bOwn.body.id}`, { name: 'beta-own', domain: a.domain, poolId: bp }, beta)
      : await service(d, beta, 'beta-attack', a.domain, bp);
    assert.deepEqual([r.status, r.body], [a.status, { error: a.error }], a.name);
    // the refusal names nothing of the other tenant
    for (const secret of ['alpha-www', aWww.body.id, '"alpha"']) assert.ok(!JSON.stringify(r.body).includes(secret), `${a.name}: ${JSON.stringify(r.body)}`);
  }
  const mine = await api(d.url, 'GET', '/api/v1/services', undefined, beta);
  assert.deepEqual(mine.body.map((s: { domain: string }) => s.domain), ['www.b.example.'], 'no refused write left a row');

  // DNS still answers the owners' members
  assert.deepEqual(await answers(d, 'www.a.example'), { status: 'NOERROR', answers: ['127.0.0.10'] });
  assert.deepEqual(await answers(d, 'shop.alpha.example.test'), { status: 'NOERROR', answers: ['127.0.0.10'] });
  assert.deepEqual(await answers(d, 'www.b.example'), { status: 'NOERROR', answers: ['127.0.0.20'] });
  assert.equal((await answers(d, 'x.www.a.example')).status, 'NXDOMAIN');

  // the system key may use reserved names, and is told who owns a delegated one
  const sp = await pool(d, sys, '127.0.0.30');
  assert.equal((await service(d, sys, 'apex', 'example.test.', sp)).status, 201);
  assert.deepEqual(await answers(d, 'example.test'), { status: 'NOERROR', answers: ['127.0.0.30'] });
  const sysDelegated = await service(d, sys, 'nope', 'x.alpha.example.test.', sp);
  assert.equal(sysDelegated.status, 403);
  assert.match(sysDelegated.body.error, /delegated to tenant "alpha"/);
  const sysTaken = await service(d, sys, 'nope', 'x.www.a.example.', sp);
  assert.equal(sysTaken.status, 409);
  assert.match(sysTaken.body.error, /^domain x\.www\.a\.example\. is not available: service "alpha-www"/);
  // within one tenant the rule is unchanged: the same name is taken, a name below is free
  const ownDup = await service(d, alpha, 'dup', 'www.a.example.', ap);
  assert.deepEqual([ownDup.status, ownDup.body.error], [409, `domain www.a.example. is already served by service "alpha-www" (${aWww.body.id})`]);
  assert.equal((await service(d, alpha, 'deeper', 'x.www.a.example.', ap)).status, 201);

  // simulate: another tenant's name, the apex and a nonexistent name are the same 404
  const sim = (h: H, name: string) => api(d.url, 'POST', '/api/v1/simulate', { name, clientIp: '203.0.113.9' }, h);
  const seen = new Set<string>();
  for (const name of ['www.a.example.', 'shop.alpha.example.test.', 'example.test.', 'nothing-here.example.', 'zz.example.test.']) {
    const r = await sim(beta, name);
    assert.equal(r.status, 404, name);
    assert.deepEqual(r.body, { error: `no service of yours is named ${name}` }, name);
    seen.add(JSON.stringify(r.body).replace(name, '<n>'));
    assert.ok(!JSON.stringify(r.body).includes('127.0.0.10'));
  }
  assert.equal(seen.size, 1, 'existing and nonexistent names answer alike');
  const own = await sim(beta, 'WWW.B.example');
  assert.equal(own.status, 200);
  assert.deepEqual(own.body.answers.map((a: { data: string }) => a.data), ['127.0.0.20']);
  assert.equal((await sim(alpha, 'www.a.example.')).body.answers[0].data, '127.0.0.10');
  const any = await sim(sys, 'www.a.example.');
  assert.deepEqual([any.status, any.body.answers[0].data], [200, '127.0.0.10'], 'supra-tenant callers simulate anything');
});

test('a row written into a delegation before it was configured is not served; requireDelegation', async (t) => {
  const d1 = await startTestDaemon(config([]), { GSLB_API_KEY: SYS });
  const db = join(d1.dir, 'gslbd.db');
  let d2: TestDaemon | undefined;
  t.after(async () => { await d2?.stop(); rmSync(d1.dir, { recursive: true, force: true }); });
  const alpha = await tenantKey(d1, 'alpha');
  const beta = await tenantKey(d1, 'beta');
  const bp = await pool(d1, beta, '127.0.0.20');
  const early = await service(d1, beta, 'early', 'www.late.example.test.', bp);
  assert.equal(early.status, 201, 'undelegated: first come');
  assert.equal((await service(d1, beta, 'free', 'www.free.example.', bp)).status, 201);
  assert.deepEqual(await answers(d1, 'www.late.example.test'), { status: 'NOERROR', answers: ['127.0.0.20'] });
  await d1.close();

  // the operator delegates late.example.test. to alpha and requires delegations
  d2 = await startTestDaemon({ ...(config([{ suffix: 'late.example.test.', tenant: 'alpha' }], true) as object), database: { path: db } } as never, { GSLB_API_KEY: SYS });
  const warned = d2.logs.lines.filter((l) => l.msg === 'service name not served');
  assert.deepEqual(warned.map((l) => [l.serviceId, l.reason]), [[early.body.id, 'delegated to another tenant']], 'logged once, at index build');
  assert.equal((await answers(d2, 'www.late.example.test')).status, 'NXDOMAIN', 'the foreign row is not served');
  assert.deepEqual(await answers(d2, 'www.free.example'), { status: 'NOERROR', answers: ['127.0.0.20'] }, 'an undelegated row of beta still is');
  const bSim = await api(d2.url, 'POST', '/api/v1/simulate', { name: 'www.late.example.test.', clientIp: '203.0.113.9' }, beta);
  assert.deepEqual([bSim.status, bSim.body], [404, { error: 'no service of yours is named www.late.example.test.' }]);

  // the owner serves names of its suffix; beta may not, nor anything outside its (no) delegations
  const ap = await pool(d2, alpha, '127.0.0.10');
  assert.equal((await service(d2, alpha, 'api', 'api.late.example.test.', ap)).status, 201);
  assert.deepEqual(await answers(d2, 'api.late.example.test'), { status: 'NOERROR', answers: ['127.0.0.10'] });
  const refused = await service(d2, beta, 'more', 'more.late.example.test.', bp);
  assert.deepEqual([refused.status, refused.body], [403, { error: 'name more.late.example.test. is not delegated to your tenant' }]);
  const outside = await service(d2, beta, 'new', 'new.free.example.', bp);
  assert.deepEqual([outside.status, outside.body], [403, { error: 'name new.free.example. is not under a suffix delegated to your tenant' }]);
  assert.equal((await service(d2, sys, 'ops', 'ops.free.example.', null)).status, 201, 'the system key is not bound by requireDelegation');
  // more plans swap in: the skipped row is not logged again
  assert.equal(d2.logs.lines.filter((l) => l.msg === 'service name not served').length, 1);
});

test('dashboard statistics count only the caller\'s tenant\'s live-feed clients', async (t) => {
  const d = await startTestDaemon(config([]), { GSLB_API_KEY: SYS });
  t.after(() => d.stop());
  const alpha = await tenantKey(d, 'alpha');
  const beta = await tenantKey(d, 'beta');
  const tok = await api(d.url, 'GET', '/api/v1/ws/token', undefined, alpha);
  const ws = new WebSocket(`${d.url.replace('http', 'ws')}/api/v1/ws?token=${encodeURIComponent(tok.body.token)}`);
  t.after(() => ws.terminate());
  await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
  const count = async (h: H) => (await api(d.url, 'GET', '/api/v1/dashboard/stats', undefined, h)).body.webSocketClients;
  const deadline = Date.now() + 3000;
  while ((await count(alpha)) !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual([await count(alpha), await count(beta), await count(sys)], [1, 0, 1]);
  const snap = await api(d.url, 'GET', '/api/v1/snapshot', undefined, beta);
  assert.equal(snap.body.stats.webSocketClients, 0);
});
