import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { tenantKey } from '../helpers/tenants.js';

// TXT records (docs/dns.md "TXT records"): /api/v1/dns/txt through the real HTTP server, answers
// checked with real `dig`, two tenants and the system key.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
type H = Record<string, string>;

const txt = (d: TestDaemon, name: string) => dig(d.ports.dnsPort as number, [name, 'TXT']);

test('TXT records over REST: created, served by dig at once, changed, deleted; values split into 255-byte strings', async (t) => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' } } as never, { GSLB_API_KEY: SYS });
  t.after(() => d.stop());
  const alpha = await tenantKey(d, 'alpha', sys);
  const made = await api(d.url, 'POST', '/api/v1/dns/txt', { name: '_ACME-challenge.www.example.test', values: ['tok-1', 'tok 2'] }, alpha);
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.deepEqual({ name: made.body.name, values: made.body.values, ttl: made.body.ttl, origin: made.body.origin }, { name: '_acme-challenge.www.example.test.', values: ['tok-1', 'tok 2'], ttl: 300, origin: 'api' });
  assert.equal(made.body.tenantId, undefined);

  let r = await txt(d, '_acme-challenge.www.example.test');
  assert.equal(r.status, 'NOERROR');
  assert.deepEqual(r.answers.sort(), ['"tok 2"', '"tok-1"']);
  assert.match(r.text, /_acme-challenge\.www\.example\.test\.\s+300\s+IN\s+TXT/);
  assert.ok(r.flags.includes('aa'));
  // the name exists: other types are NODATA with the SOA, not NXDOMAIN
  r = await dig(d.ports.dnsPort as number, ['_acme-challenge.www.example.test', 'A']);
  assert.equal(r.status, 'NOERROR');
  assert.deepEqual(r.answers, []);
  assert.match(r.text, /AUTHORITY SECTION:\n\S+\s+\d+\s+IN\s+SOA/);
  // and the names between it and the apex are empty non-terminals
  assert.equal((await dig(d.ports.dnsPort as number, ['www.example.test', 'A'])).status, 'NOERROR');

  const long = 'k'.repeat(300);
  const put = await api(d.url, 'PUT', `/api/v1/dns/txt/${made.body.id}`, { name: '_acme-challenge.www.example.test.', values: [long], ttl: 60 }, alpha);
  assert.equal(put.status, 200, JSON.stringify(put.body));
  r = await txt(d, '_acme-challenge.www.example.test');
  assert.deepEqual(r.answers, [`"${'k'.repeat(255)}" "${'k'.repeat(45)}"`]);
  assert.match(r.text, /\s60\s+IN\s+TXT/);

  const list = await api(d.url, 'GET', '/api/v1/dns/txt', undefined, alpha);
  assert.deepEqual(list.body.map((x: { id: string }) => x.id), [made.body.id]);
  assert.equal((await api(d.url, 'GET', `/api/v1/dns/txt/${made.body.id}`, undefined, alpha)).body.values[0], long);

  assert.equal((await api(d.url, 'DELETE', `/api/v1/dns/txt/${made.body.id}`, undefined, alpha)).status, 204);
  assert.equal((await txt(d, '_acme-challenge.www.example.test')).status, 'NXDOMAIN');
  assert.equal((await api(d.url, 'GET', `/api/v1/dns/txt/${made.body.id}`, undefined, alpha)).status, 404);
});

test('TXT records: bad input is 400 naming the field; one record set per name; beside the tenant\'s own service', async (t) => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' } } as never, { GSLB_API_KEY: SYS });
  t.after(() => d.stop());
  const alpha = await tenantKey(d, 'alpha', sys);
  const post = (body: unknown, h: H = alpha) => api(d.url, 'POST', '/api/v1/dns/txt', body, h);
  const bad: [unknown, RegExp][] = [
    [{ name: 'x.example.test', values: [] }, /values/],
    [{ name: 'x.example.test', values: ['a', 'a'] }, /^values\[1\]: the same value twice/],
    [{ name: '*.example.test', values: ['a'] }, /^name: wildcard/],
    [{ name: 'x.elsewhere.test', values: ['a'] }, /^name: x\.elsewhere\.test\. is outside every zone this server serves/],
    [{ name: 'x.example.test', values: ['a'], extra: 1 }, /extra/],
    [{ name: 'x.example.test', values: ['a'], ttl: -1 }, /ttl/],
  ];
  for (const [body, want] of bad) {
    const r = await post(body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.error, want);
  }
  const pool = await api(d.url, 'POST', '/api/v1/pools', { name: 'p' }, alpha);
  await api(d.url, 'POST', `/api/v1/pools/${pool.body.id}/members`, { ipAddress: '127.0.0.9', port: 80 }, alpha);
  assert.equal((await api(d.url, 'POST', '/api/v1/services', { name: 'www', domain: 'www.example.test.', poolId: pool.body.id }, alpha)).status, 201);
  // a TXT record beside the tenant's own address record, and a service name outside dns.domain is a zone too
  assert.equal((await post({ name: 'www.example.test', values: ['v=spf1 -all'] })).status, 201);
  assert.equal((await api(d.url, 'POST', '/api/v1/services', { name: 'own', domain: 'shop.alpha.test.', poolId: pool.body.id }, alpha)).status, 201);
  assert.equal((await post({ name: '_dmarc.shop.alpha.test', values: ['v=DMARC1; p=none'] })).status, 201);
  assert.deepEqual((await txt(d, '_dmarc.shop.alpha.test')).answers, ['"v=DMARC1; p=none"']);
  assert.deepEqual((await dig(d.ports.dnsPort as number, ['www.example.test', 'A'])).answers, ['127.0.0.9']);
  assert.deepEqual((await txt(d, 'www.example.test')).answers, ['"v=spf1 -all"']);
  const again = await post({ name: 'WWW.example.test.', values: ['other'] });
  assert.equal(again.status, 409);
  assert.match(again.body.error, /already has TXT record .*: change its values instead/);
});

test('TXT records across tenants: reserved apex for the system only, names of another tenant refused, rows never seen', async (t) => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' } } as never, { GSLB_API_KEY: SYS });
  t.after(() => d.stop());
  const alpha = await tenantKey(d, 'alpha', sys);
  const beta = await tenantKey(d, 'beta', sys);
  const apex = await api(d.url, 'POST', '/api/v1/dns/txt', { name: 'example.test', values: ['x'] }, alpha);
  assert.equal(apex.status, 403);
  assert.match(apex.body.error, /reserved/);
  assert.equal((await api(d.url, 'POST', '/api/v1/dns/txt', { name: 'example.test', values: ['google-site-verification=abc'] }, sys)).status, 201);
  const soa = await dig(d.ports.dnsPort as number, ['example.test', 'SOA']);
  assert.equal(soa.answers.length, 1, 'the apex SOA still answers');
  assert.deepEqual((await txt(d, 'example.test')).answers, ['"google-site-verification=abc"']);

  const mine = await api(d.url, 'POST', '/api/v1/dns/txt', { name: '_acme-challenge.app.example.test', values: ['a'] }, alpha);
  assert.equal(mine.status, 201);
  const taken = await api(d.url, 'POST', '/api/v1/dns/txt', { name: '_acme-challenge.app.example.test', values: ['b'] }, beta);
  assert.equal(taken.status, 409);
  assert.equal(taken.body.error, 'domain _acme-challenge.app.example.test. is not available', 'names no tenant');
  const above = await api(d.url, 'POST', '/api/v1/dns/txt', { name: 'app.example.test', values: ['b'] }, beta);
  assert.equal(above.status, 409, 'a name above another tenant\'s record is not available either');
  assert.deepEqual((await api(d.url, 'GET', '/api/v1/dns/txt', undefined, beta)).body, []);
  for (const [m, body] of [['GET', undefined], ['PUT', { name: 'z.example.test', values: ['z'] }], ['DELETE', undefined]] as const) {
    assert.equal((await api(d.url, m, `/api/v1/dns/txt/${mine.body.id}`, body, beta)).status, 404, m);
  }
  assert.deepEqual((await txt(d, '_acme-challenge.app.example.test')).answers, ['"a"']);
  assert.equal((await api(d.url, 'GET', '/api/v1/dns/txt', undefined, sys)).body.length, 2, 'the system key sees every tenant\'s records');
});
