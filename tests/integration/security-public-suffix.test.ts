import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { tenantKey } from '../helpers/tenants.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// docs/security.md "Names": no tenant squats a top-level domain or a public suffix. A service,
// redirect host, TXT record or form domain that is one, or a wildcard at or above one, is a 400
// naming the suffix; names under a suffix (and under a TLD the list does not know, `example.test`)
// keep working. A form's allowed_domains refuses `*`, `*.` and `*.<suffix>`.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };

test('a tenant cannot claim a TLD or public suffix as a service, redirect, TXT record or form domain; other tenants keep their names', async (t) => {
  const d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' },
    redirect: { enabled: true, listenAddr: '127.0.0.1', port: 0 },
    forms: { tenantTiers: { alpha: 'business', beta: 'business' }, deliveries: { enabled: false } },
  } as never, { GSLB_API_KEY: SYS });
  t.after(() => d.stop());
  const alpha = await tenantKey(d, 'alpha', sys);
  const beta = await tenantKey(d, 'beta', sys);
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'a' }, alpha)).body.id as string;
  const formsAlpha = publicClient(d, addFormKey(d, { tenantId: 'alpha' }).key);
  const formsBeta = publicClient(d, addFormKey(d, { tenantId: 'beta' }).key);

  const kinds = {
    service: (name: string) => api(d.url, 'POST', '/api/v1/services', { name: `s-${randomBytes(3).toString('hex')}`, domain: name.endsWith('.') ? name : `${name}.`, poolId: pool }, alpha),
    redirect: (name: string) => api(d.url, 'POST', '/api/v1/redirects', { host: name.replace(/\.$/, ''), target: 'https://target.example.org' }, alpha),
    txt: (name: string) => api(d.url, 'POST', '/api/v1/dns/txt', { name: name.endsWith('.') ? name : `${name}.`, values: ['v=1'] }, alpha),
    'form domain': (name: string) => formsAlpha('POST', '/domain', { domain: name }),
  };
  const refused: { name: string; suffix: string }[] = [
    { name: '*.com', suffix: 'com' }, { name: 'org.', suffix: 'org' }, { name: 'co.uk.', suffix: 'co.uk' }, { name: '*.co.uk', suffix: 'co.uk' },
    { name: 'test.', suffix: 'test' }, { name: '*.test', suffix: 'test' }, { name: 'github.io', suffix: 'github.io' },
  ];
  for (const [kind, create] of Object.entries(kinds)) {
    for (const r of refused) {
      // the schema of a TXT name and of a form domain refuses wildcards on its own
      if ((kind === 'txt' || kind === 'form domain') && r.name.startsWith('*')) continue;
      const res = await create(r.name);
      const message = kind === 'form domain' ? res.body.message as string : res.body.error as string;
      assert.equal(res.status, 400, `${kind} ${r.name}: ${JSON.stringify(res.body)}`);
      assert.match(message, /public suffix/, `${kind} ${r.name}`);
      assert.ok(message.includes(`suffix ${r.suffix}`) || message.includes(`(${r.suffix})`), `${kind} ${r.name} names ${r.suffix}: ${message}`);
      if (kind === 'form domain') assert.equal(res.body.name, 'validation_error');
    }
  }
  // the refusals took nothing: beta gets names under those suffixes
  const bpool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'b' }, beta)).body.id as string;
  assert.equal((await api(d.url, 'POST', '/api/v1/services', { name: 'bshop', domain: 'www.bshop.com.', poolId: bpool }, beta)).status, 201);
  assert.equal((await api(d.url, 'POST', '/api/v1/redirects', { host: 'example.org', target: 'https://www.example.org' }, beta)).status, 201);
  assert.equal((await api(d.url, 'POST', '/api/v1/services', { name: 'uk', domain: 'shop.co.uk.', poolId: bpool }, beta)).status, 201);
  assert.equal((await formsBeta('POST', '/domain', { domain: 'forms.bshop.co.uk' })).status, 201);

  // names under a suffix, and under a TLD the list does not know, keep working for every kind
  assert.equal((await kinds.service('www.alpha-shop.com.')).status, 201);
  assert.equal((await kinds.redirect('*.alpha-shop.example.test')).status, 201);
  assert.equal((await kinds.txt('_acme-challenge.www.alpha-shop.com.')).status, 201);
  assert.equal((await kinds.txt('www.example.test.')).status, 201);
  assert.equal((await kinds['form domain']('forms.alpha-shop.com')).status, 201);

  // the system key is held to the same rule (no row can serve a public suffix)
  const sysSvc = await api(d.url, 'POST', '/api/v1/services', { name: 'root', domain: 'com.' }, sys);
  assert.deepEqual([sysSvc.status, sysSvc.body.error], [400, 'name com. is a public suffix (com); use a name under it']);
  const wild = await api(d.url, 'POST', '/api/v1/redirects', { host: '*.com', target: 'https://x.example.org' }, sys);
  assert.deepEqual([wild.status, wild.body.error], [400, 'host: name *.com. covers every name under the public suffix com']);
});

test('a form\'s allowed_domains refuses *, *. and a wildcard at a public suffix with 400', async (t) => {
  const d = await startTestDaemon({ forms: { deliveries: { enabled: false } } } as never);
  t.after(() => d.stop());
  const call = publicClient(d, addFormKey(d).key);
  for (const entry of ['*', '*.', '*.com', '*.co.uk']) {
    const res = await call('POST', '/form', { name: 'Contact', allowed_domains: ['example.com', entry] });
    assert.equal(res.status, 400, `${entry}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.name, 'validation_error');
    assert.match(res.body.message as string, /^allowed_domains\[1\]: .* covers every name/, entry);
  }
  const made = await call('POST', '/form', { name: 'Contact', allowed_domains: ['*.example.com', 'localhost', '*.shop.test'] });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const patched = await call('PATCH', `/form/${made.body.id as string}`, { allowed_domains: ['*.com'] });
  assert.equal(patched.status, 400, JSON.stringify(patched.body));
});
