import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { tenantKey } from '../helpers/tenants.js';

// Redirect rules across tenants (docs/redirects.md "Names", docs/security.md): each tenant sees and
// changes only its own rules; a host is a name, so reserved names, delegations and first come hold
// against other tenants' rules and services alike, and a refusal names nothing of the other tenant.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
type H = Record<string, string>;

async function location(port: number, host: string): Promise<string> {
  const { stdout } = await promisify(execFile)('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{redirect_url}', '-H', `Host: ${host}`, `http://127.0.0.1:${port}/p`]);
  return stdout.trim();
}

test('redirect rules of two tenants: own rows only, names owned across tenants, refusals that reveal nothing', async (t) => {
  const d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' },
    tenancy: { delegations: [{ suffix: 'alpha.example.test', tenant: 'alpha' }] },
    redirect: { enabled: true, listenAddr: '127.0.0.1', port: 0 },
  } as never, { GSLB_API_KEY: SYS });
  t.after(() => d.stop());
  const alpha = await tenantKey(d, 'alpha', sys);
  const beta = await tenantKey(d, 'beta', sys);
  const create = (h: H, host: string, target = `https://${host.replace('*.', 'any.')}.target.example.org`) => api(d.url, 'POST', '/api/v1/redirects', { host, target }, h);

  const a1 = await create(alpha, 'www.alpha.example.test');
  assert.equal(a1.status, 201, JSON.stringify(a1.body));
  const a2 = await create(alpha, 'first.example.net');
  assert.equal(a2.status, 201);
  const b1 = await create(beta, 'www.beta.example.net');
  assert.equal(b1.status, 201);

  // each tenant lists, reads and changes only its own rules; another tenant's id is a 404
  const hosts = async (h: H) => ((await api(d.url, 'GET', '/api/v1/redirects', undefined, h)).body as { host: string }[]).map((r) => r.host).sort();
  assert.deepEqual(await hosts(alpha), ['first.example.net', 'www.alpha.example.test']);
  assert.deepEqual(await hosts(beta), ['www.beta.example.net']);
  assert.deepEqual(await hosts(sys), ['first.example.net', 'www.alpha.example.test', 'www.beta.example.net'], 'the system key sees every tenant');
  for (const [m, body] of [['GET', undefined], ['PUT', { host: 'www.beta.example.net', target: 'https://hijack.example.org' }], ['DELETE', undefined]] as const) {
    const r = await api(d.url, m, `/api/v1/redirects/${a1.body.id as string}`, body, beta);
    assert.equal(r.status, 404, `${m} of another tenant's rule`);
    assert.equal(r.body.error, `redirect rule ${a1.body.id as string} not found`);
  }
  assert.equal(await location(d.ports.redirectPort!, 'www.alpha.example.test'), '302 https://www.alpha.example.test.target.example.org/p', 'the refused writes changed nothing');

  // names: the other tenant's host, names under and above it, a delegated name, the apex
  const refusals: { host: string; status: number; error: string }[] = [
    { host: 'first.example.net', status: 409, error: 'host: domain first.example.net. is not available' },
    { host: 'deep.first.example.net', status: 409, error: 'host: domain deep.first.example.net. is not available' },
    { host: '*.example.net', status: 409, error: 'host: domain example.net. is not available' },
    { host: 'shop.alpha.example.test', status: 403, error: 'host: name shop.alpha.example.test. is not delegated to your tenant' },
    { host: '*.alpha.example.test', status: 403, error: 'host: name alpha.example.test. is not delegated to your tenant' },
    { host: 'example.test', status: 403, error: 'host: name example.test. is reserved' },
    { host: 'ns1.example.test', status: 403, error: 'host: name ns1.example.test. is reserved' },
  ];
  for (const r of refusals) {
    const res = await create(beta, r.host);
    assert.deepEqual([res.status, res.body.error], [r.status, r.error], r.host);
    assert.ok(!JSON.stringify(res.body).includes('alpha"') && !JSON.stringify(res.body).includes(a2.body.id as string), r.host);
  }
  // renaming its own rule onto another tenant's name is refused the same way
  const rename = await api(d.url, 'PUT', `/api/v1/redirects/${b1.body.id as string}`, { host: 'first.example.net', target: 'https://x.example.org' }, beta);
  assert.deepEqual([rename.status, rename.body.error], [409, 'host: domain first.example.net. is not available']);

  // a service is refused on another tenant's redirect host, and the other way round
  const pool = await api(d.url, 'POST', '/api/v1/pools', { name: 'bp' }, beta);
  const svc = await api(d.url, 'POST', '/api/v1/services', { name: 'steal', domain: 'first.example.net.', poolId: pool.body.id }, beta);
  assert.deepEqual([svc.status, svc.body.error], [409, 'domain first.example.net. is not available']);
  assert.equal((await api(d.url, 'POST', '/api/v1/services', { name: 'beta-app', domain: 'app.beta.example.net.', poolId: pool.body.id }, beta)).status, 201);
  const onService = await create(alpha, 'app.beta.example.net');
  assert.deepEqual([onService.status, onService.body.error], [409, 'host: domain app.beta.example.net. is not available']);
  // a tenant's own service name may carry its redirect (the name points at the redirect listener)
  assert.equal((await create(beta, 'app.beta.example.net')).status, 201);

  // the system key is told whose name it is
  const sysDup = await create(sys, 'first.example.net');
  assert.equal(sysDup.status, 409);
  assert.match(sysDup.body.error, /tenant "alpha"/);

  // both tenants' rules are served by the one listener
  assert.equal(await location(d.ports.redirectPort!, 'www.beta.example.net'), '302 https://www.beta.example.net.target.example.org/p');
  assert.equal(await location(d.ports.redirectPort!, 'first.example.net'), '302 https://first.example.net.target.example.org/p');
});
