import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// Custom domains (forms-api.md §3 rule 2, §4 /domain*; docs/forms.md "Domains"): register,
// records to create, verify through the configured resolver (a local authoritative server of the
// test answering TXT), activation, the public endpoint under the domain's Host, workspaces apart.

const { Packet } = dns2;
let d: TestDaemon;
const txt = new Map<string, string[]>();
let server: ReturnType<typeof dns2.createServer>;

before(async () => {
  server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const res = Packet.createResponseFromRequest(request);
      const q = request.questions[0]!;
      for (const value of txt.get(q.name.toLowerCase()) ?? []) res.answers.push({ name: q.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data: value } as never);
      void send(res);
    },
  });
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = (server.addresses().udp as AddressInfo).port;
  d = await startTestDaemon({
    api: { publicURL: 'https://forms.service.test' },
    forms: { tenantTiers: { biz: 'business', biz2: 'business' }, deliveries: { enabled: false }, domains: { resolvers: [`127.0.0.1:${port}`], timeoutMs: 1000 } },
  } as never);
});
after(async () => {
  try {
    await d?.stop();
  } finally {
    await server?.close();
  }
});

/** POSTs JSON to the daemon with a Host header of our choosing (fetch may not set Host). */
function postAs(host: string | undefined, formId: string): Promise<{ status: number; body: any }> {
  const url = new URL(`${d.url}/f/${formId}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...(host ? { host } : {}), 'content-type': 'application/json', accept: 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end('{"a":1}');
  });
}

test('register, records, a failed verify naming expected and found, verify, and the endpoint under the domain\'s Host', async () => {
  const call = publicClient(d, addFormKey(d, { tenantId: 'biz' }).key);
  const made = await call('POST', '/domain', { domain: 'Forms.Example.COM.' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const dom = made.body;
  assert.deepEqual([dom.domain, dom.status, dom.verified_at], ['forms.example.com', 'pending', null]);
  const token = dom.records[0].value as string;
  assert.match(token, /^gslbd-verify=[A-Za-z0-9_-]{24}$/);
  assert.deepEqual(dom.records, [
    { type: 'TXT', name: '_gslbd-challenge.forms.example.com', value: token },
    { type: 'CNAME', name: 'forms.example.com', value: 'forms.service.test' },
  ]);
  assert.equal((await call('GET', '/domain')).body.total, 1);

  const form = (await call('POST', '/form', { name: 'Branded' })).body.id as string;
  const post = (host: string) => postAs(host, form);
  const pending = await post('forms.example.com');
  assert.equal(pending.status, 404, 'not before it is verified');
  assert.match(pending.body.message, /domain forms\.example\.com is not verified yet/);

  const none = await call('POST', `/domain/${dom.id}/verify`, { domain_id: dom.id });
  assert.equal(none.status, 409);
  assert.equal(none.body.message, `domain forms.example.com is not verified: expected TXT _gslbd-challenge.forms.example.com = "${token}", found no TXT record`);
  txt.set('_gslbd-challenge.forms.example.com', ['gslbd-verify=wrong']);
  const wrong = await call('POST', `/domain/${dom.id}/verify`, { domain_id: dom.id });
  assert.equal(wrong.body.message, `domain forms.example.com is not verified: expected TXT _gslbd-challenge.forms.example.com = "${token}", found "gslbd-verify=wrong"`);
  txt.set('_gslbd-challenge.forms.example.com', ['v=spf1 -all', token]);
  const ok = await call('POST', `/domain/${dom.id}/verify`, { domain_id: dom.id });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.status, 'active');
  assert.match(ok.body.verified_at, /^\d{4}-/);

  assert.equal((await post('forms.example.com')).status, 200, 'the endpoint answers under the active domain');
  const other = publicClient(d, addFormKey(d, { tenantId: 'biz2' }).key);
  const foreign = (await other('POST', '/form', { name: 'Not theirs' })).body.id as string;
  assert.equal((await postAs('forms.example.com:443', foreign)).status, 404, 'another workspace\'s form is not served under this domain');
  assert.equal((await postAs(undefined, foreign)).status, 200, 'the service\'s own host serves every form');

  assert.equal((await other('POST', '/domain', { domain: 'forms.example.com' })).status, 409, 'a host name belongs to one workspace');
  assert.equal((await other('POST', `/domain/${dom.id}/verify`, { domain_id: dom.id })).status, 404);
  assert.equal((await other('DELETE', `/domain/${dom.id}`, { domain_id: dom.id })).status, 404);
  const del = await call('DELETE', `/domain/${dom.id}`, { domain_id: dom.id });
  assert.deepEqual([del.status, del.body], [200, { deleted: true, domain_id: dom.id }]);
  assert.equal((await post('forms.example.com')).status, 200, 'a deleted domain is just another Host');
});

test('domains need a plan with customDomains (403); bad host names are 400; a single-form key cannot change them', async () => {
  const free = publicClient(d, addFormKey(d, { tenantId: 'free-dom' }).key);
  const r = await free('POST', '/domain', { domain: 'a.example.com' });
  assert.deepEqual([r.status, r.body.message], [403, 'plan free does not include customDomains (needed by domains)']);
  const call = publicClient(d, addFormKey(d, { tenantId: 'biz' }).key);
  for (const bad of ['localhost', 'no spaces.example.com', '*.example.com', '-x.example.com']) {
    const res = await call('POST', '/domain', { domain: bad });
    assert.equal(res.status, 400, bad);
  }
  const form = (await call('POST', '/form', { name: 'One' })).body.id as string;
  const single = publicClient(d, addFormKey(d, { tenantId: 'biz', formId: form }).key);
  assert.equal((await single('GET', '/domain')).status, 200);
  assert.equal((await single('POST', '/domain', { domain: 'b.example.com' })).status, 403);
});

/** Registers `domain` on `daemon` over a plain HTTP request with the Host header `host`; answers the records. */
function registerAs(daemon: TestDaemon, key: string, host: string, domain: string): Promise<{ status: number; body: any }> {
  const url = new URL(`${daemon.url}/public/v1/domain`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { host, authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ domain }));
  });
}

test('the answer always names the record that points the host at the service: CNAME to the host asked when nothing is configured, A/AAAA for an address', async () => {
  const cases: { name: string; domains: Record<string, unknown>; publicURL?: string; host: string; want: { type: string; value: string } }[] = [
    { name: 'no publicURL, no target: the host the request came to', domains: {}, host: 'forms.provider.test:8443', want: { type: 'CNAME', value: 'forms.provider.test' } },
    { name: 'the host asked is an IPv4 address', domains: {}, host: '192.0.2.10:8080', want: { type: 'A', value: '192.0.2.10' } },
    { name: 'the host asked is an IPv6 address', domains: {}, host: '[2001:db8::10]:8080', want: { type: 'AAAA', value: '2001:db8::10' } },
    { name: 'publicURL is an address', domains: {}, publicURL: 'http://198.51.100.7:8080', host: 'ignored.test', want: { type: 'A', value: '198.51.100.7' } },
    { name: 'forms.domains.target wins over the host asked', domains: { target: 'edge.provider.test' }, host: 'ignored.test', want: { type: 'CNAME', value: 'edge.provider.test' } },
    { name: 'forms.domains.address: an AAAA record', domains: { address: '2001:db8::1' }, publicURL: 'https://forms.service.test', host: 'ignored.test', want: { type: 'AAAA', value: '2001:db8::1' } },
  ];
  // one daemon without api.publicURL; each case sets the settings it reads at answer time
  const daemon = await startTestDaemon({ forms: { defaultTier: 'business', deliveries: { enabled: false } } } as never);
  try {
    const { key } = addFormKey(daemon);
    const cfg = daemon.core.config as { api: { publicURL?: string }; forms: { domains: Record<string, unknown> } };
    for (const [i, c] of cases.entries()) {
      cfg.api.publicURL = c.publicURL;
      cfg.forms.domains = { ...cfg.forms.domains, target: undefined, address: undefined, ...c.domains };
      const host = `contact${i}.customer.test`;
      const made = await registerAs(daemon, key, c.host, host);
      assert.equal(made.status, 201, `${c.name}: ${JSON.stringify(made.body)}`);
      assert.deepEqual(made.body.records.map((r: { type: string }) => r.type), ['TXT', c.want.type], c.name);
      assert.deepEqual(made.body.records[1], { ...c.want, name: host }, c.name);
      const listed = (await publicClient(daemon, key)('GET', '/domain')).body.data.find((x: { domain: string }) => x.domain === host);
      assert.equal(listed.records.length, 2, `${c.name}: the list names it too`);
    }
  } finally {
    await daemon.stop();
  }
});
