import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { issueLicense } from '../../runtime/license/license.js';

// Real-user measurement over the real HTTP and DNS servers (gslb-api.md §4, §7, §8; docs/rum.md):
// the config, every ingest rule, the per-source limiter, trusted proxies, the licence, the status
// and the rum step answering `dig +subnet` from the measured subnet.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
const SECRET = randomBytes(32).toString('hex');
let d: TestDaemon;
let poolId = '';

/** POSTs a beacon from a chosen loopback address, with optional headers; returns status, body and headers. */
function beacon(body: string, opts: { from?: string; type?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const url = new URL(`${d.url}/api/v1/rum/ingest`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress: opts.from ?? '127.0.0.1', headers: { 'content-type': opts.type ?? 'text/plain;charset=UTF-8', ...opts.headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => { let b: unknown = text; try { b = JSON.parse(text); } catch { /* not JSON */ } resolve({ status: res.statusCode ?? 0, body: b, headers: res.headers }); });
    });
    req.on('error', reject);
    req.end(body);
  });
}
const samples = (s: { ip: string; ms: number }[], domain = 'www.example.test') => JSON.stringify({ domain, samples: s });
const answer = async (subnet: string) => (await dig(d.ports.dnsPort as number, ['www.example.test', 'A', `+subnet=${subnet}`])).answers;
/** The rum step's reason for a client subnet, from POST /simulate. */
const reasonFor = async (ecsSubnet: string) => (await api(d.url, 'POST', '/api/v1/simulate', { name: 'www.example.test', type: 'A', clientIp: '10.0.0.1', ecsSubnet }, sys)).body.steps.at(-1).reason as string;

before(async () => {
  const key = await issueLicense({ tier: 'pro', licensee: 'tests', expiresAt: Math.floor(Date.now() / 1000) + 86_400 }, SECRET);
  d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' },
    api: { trustedProxies: ['127.0.0.2/32'] },
    license: { secret: SECRET, licenseKey: key },
  } as never, { GSLB_API_KEY: SYS });
  poolId = (await api(d.url, 'POST', '/api/v1/pools', { name: 'web' }, sys)).body.id;
  for (const [ip, rumUrl] of [['127.0.0.21', 'http://127.0.0.21/rum'], ['127.0.0.22', 'http://127.0.0.22/rum'], ['127.0.0.23', null]] as const) {
    assert.equal((await api(d.url, 'POST', `/api/v1/pools/${poolId}/members`, { ipAddress: ip, port: 80, rumUrl }, sys)).status, 201);
  }
  assert.equal((await api(d.url, 'POST', '/api/v1/services', { name: 'www', domain: 'www.example.test.', poolId, chain: ['rum'] }, sys)).status, 201);
});
after(() => d?.stop());

test('GET /rum/config: the members with a rumUrl, for any origin; unknown names are 404', async () => {
  const r = await api(d.url, 'GET', '/api/v1/rum/config?domain=WWW.example.test');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { domain: 'www.example.test.', delayMs: 2000, targets: [{ ip: '127.0.0.21', url: 'http://127.0.0.21/rum' }, { ip: '127.0.0.22', url: 'http://127.0.0.22/rum' }] });
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
  assert.equal((await api(d.url, 'GET', '/api/v1/rum/config?domain=nope.example.test')).status, 404);
  assert.equal((await api(d.url, 'GET', '/api/v1/rum/config')).status, 400);
  const js = await fetch(`${d.url}/rum.js`);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /javascript/);
  assert.ok((await js.text()).length < 2048, 'rum.js stays under 2 KB');
});

test('OPTIONS /rum/ingest: the CORS preflight of a JSON beacon allows any origin, POST and Content-Type, never credentials', async () => {
  const pre = await fetch(`${d.url}/api/v1/rum/ingest`, {
    method: 'OPTIONS',
    headers: { origin: 'https://shop.example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  assert.equal(pre.status, 204, await pre.text());
  assert.equal(pre.headers.get('access-control-allow-origin'), '*');
  assert.match(pre.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
  assert.match(pre.headers.get('access-control-allow-headers') ?? '', /content-type/i);
  assert.equal(pre.headers.get('access-control-allow-credentials'), null);
  // the request the preflight allowed: a JSON beacon from that page (its one sample refused, so the store is untouched)
  const r = await beacon(samples([{ ip: '192.0.2.99', ms: 30 }]), { from: '127.0.0.41', type: 'application/json', headers: { origin: 'https://shop.example.org' } });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(r.body.accepted, 0);
  assert.equal(r.headers['access-control-allow-origin'], '*');
});

test('POST /rum/ingest: each sample judged by §7/§8; the accepted ones steer the rum step for their subnet only', async () => {
  assert.equal((await answer('10.9.8.0/24')).length, 1, 'the rum step answers one member');
  assert.equal(await reasonFor('10.9.8.0/24'), 'RumFallbackOrder', 'no data yet: the first candidate in current order');
  const r = await beacon(samples([
    { ip: '127.0.0.21', ms: 90 }, { ip: '127.0.0.22', ms: 12.5 }, { ip: '127.0.0.23', ms: 1 }, { ip: '192.0.2.1', ms: 1 },
    { ip: '127.0.0.21', ms: 0 }, { ip: '127.0.0.21', ms: 60_001 }, { ip: '127.0.0.22', ms: 5 },
  ]), { from: '127.0.0.5' });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.deepEqual(r.body, { accepted: 2, rejected: [
    { index: 2, ip: '127.0.0.23', reason: 'NoRumUrl' }, { index: 3, ip: '192.0.2.1', reason: 'NotInPool' },
    { index: 4, ip: '127.0.0.21', reason: 'LatencyOutOfRange' }, { index: 5, ip: '127.0.0.21', reason: 'LatencyOutOfRange' },
    { index: 6, ip: '127.0.0.22', reason: 'Duplicate' },
  ] });
  assert.equal(r.headers['access-control-allow-origin'], '*');
  assert.deepEqual(await answer('127.0.0.0/24'), ['127.0.0.22'], 'the measured subnet gets the fastest member');
  for (let i = 0; i < 3; i++) assert.deepEqual(await answer('127.0.0.0/24'), ['127.0.0.22'], 'every time, whatever the rotation');
  assert.equal(await reasonFor('10.9.8.0/24'), 'RumFallbackOrder', 'another subnet is not steered');
  const sim = await api(d.url, 'POST', '/api/v1/simulate', { name: 'www.example.test', type: 'A', clientIp: '127.0.0.9' }, sys);
  assert.match(sim.body.steps.at(-1).reason, /^RumData 12\.5ms$/);
  assert.equal((await beacon(samples([{ ip: '127.0.0.21', ms: 60_000 }]), { from: '127.0.0.5' })).body.accepted, 1, '60,000 ms is the largest accepted');
});

test('POST /rum/ingest: bodies past 8 KB or 32 samples, broken JSON and other media types are refused', async () => {
  const from = '127.0.0.6';
  const many = Array.from({ length: 33 }, () => ({ ip: '127.0.0.21', ms: 5 }));
  assert.equal((await beacon(samples(many), { from })).status, 400);
  assert.equal((await beacon(samples([{ ip: '127.0.0.21', ms: 5 }]).padEnd(8 * 1024 + 1, ' '), { from })).status, 413);
  const broken = await beacon('{"domain":', { from });
  assert.deepEqual([broken.status, broken.body.error], [400, 'the body is not JSON']);
  assert.equal((await beacon(samples([{ ip: '127.0.0.21', ms: 5 }]), { from, type: 'application/x-www-form-urlencoded' })).status, 415);
  assert.equal((await beacon(JSON.stringify({ domain: 'www.example.test', samples: [{ ip: '127.0.0.21', ms: '5' }] }), { from })).status, 400);
  assert.equal((await beacon(samples([{ ip: '127.0.0.21', ms: 5 }], 'other.example.test'), { from })).status, 404);
  assert.equal((await beacon(samples([{ ip: '127.0.0.21', ms: 5 }]), { from, type: 'application/json' })).status, 202, 'JSON is accepted too');
});

test('POST /rum/ingest: 2 a second with a burst of 10 per source address, then 429 with Retry-After', async () => {
  const from = '127.0.0.7';
  const statuses: number[] = [];
  let last: Awaited<ReturnType<typeof beacon>> | undefined;
  for (let i = 0; i < 12; i++) { last = await beacon(samples([{ ip: '127.0.0.21', ms: 5 }]), { from }); statuses.push(last.status); }
  assert.deepEqual(statuses.slice(0, 10), new Array(10).fill(202));
  assert.equal(statuses[10], 429);
  assert.equal(last!.status, 429);
  assert.match(String(last!.headers['retry-after']), /^[12]$/);
  assert.equal(typeof last!.body.error, 'string');
  assert.equal((await beacon(samples([{ ip: '127.0.0.21', ms: 5 }]), { from: '127.0.0.8' })).status, 202, 'another source is not limited');
});

test('the client address: X-Forwarded-For only from api.trustedProxies', async () => {
  const r = await beacon(samples([{ ip: '127.0.0.21', ms: 3 }, { ip: '127.0.0.22', ms: 30 }]), { from: '127.0.0.2', headers: { 'x-forwarded-for': '198.51.100.7' } });
  assert.equal(r.status, 202);
  assert.deepEqual(await answer('198.51.100.0/24'), ['127.0.0.21'], 'the visitor behind the trusted proxy is measured');
  const spoof = await beacon(samples([{ ip: '127.0.0.21', ms: 1 }, { ip: '127.0.0.22', ms: 99 }]), { from: '127.0.0.4', headers: { 'x-forwarded-for': '203.0.113.7' } });
  assert.equal(spoof.status, 202);
  assert.equal(await reasonFor('203.0.113.0/24'), 'RumFallbackOrder', 'no data for the spoofed subnet');
  assert.match(await reasonFor('127.0.0.0/24'), /^RumData /, 'the samples count for the connection\'s own subnet');
});

test('GET /rum/status: pools:read; a tenant sees its own members only', async () => {
  assert.equal((await api(d.url, 'GET', '/api/v1/rum/status')).status, 401);
  const all = await api(d.url, 'GET', '/api/v1/rum/status', undefined, sys);
  assert.equal(all.status, 200);
  assert.ok(all.body.subnets >= 2);
  assert.deepEqual(all.body.members.map((m: { ipAddress: string }) => m.ipAddress).sort(), ['127.0.0.21', '127.0.0.22']);
  assert.equal(all.body.members[0].poolId, poolId);
  assert.deepEqual(all.body.limits, { maxSubnets: 50_000, ttlSeconds: 1800, ratePerSecond: 2, burst: 10 });
  assert.ok(all.body.store.samples >= all.body.measurements);
  assert.equal((await api(d.url, 'POST', '/api/v1/tenants', { id: 'other' }, sys)).status, 201);
  const k = (await api(d.url, 'POST', '/api/v1/tenants/other/apikeys', { name: 'k' }, sys)).body.key as string;
  const theirs = await api(d.url, 'GET', '/api/v1/rum/status', undefined, { authorization: `Bearer ${k}` });
  assert.equal(theirs.status, 200);
  assert.deepEqual([theirs.body.subnets, theirs.body.measurements, theirs.body.members, theirs.body.store], [0, 0, [], undefined]);
});

test('without a pro licence RUM answers 403 and takes nothing; the DNS answers fall back', async () => {
  const free = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' } } as never, { GSLB_API_KEY: SYS });
  try {
    const c = await api(free.url, 'GET', '/api/v1/rum/config?domain=www.example.test');
    assert.equal(c.status, 403);
    assert.equal(c.body.error, 'real-user measurement needs the pro licence tier or above; this server runs the free tier');
    const i = await api(free.url, 'POST', '/api/v1/rum/ingest', { domain: 'www.example.test', samples: [{ ip: '127.0.0.21', ms: 1 }] });
    assert.equal(i.status, 403);
  } finally {
    await free.stop();
  }
});
