import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { freePort } from '../helpers/proc.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// A custom form domain verified end to end on one machine (docs/forms.md "Domains"): the zone is
// served by gslbd itself, the workspace publishes the challenge as a TXT record over
// /api/v1/dns/txt, and /domain/{id}/verify resolves it through gslbd's own DNS server.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };

/** The daemon on a DNS port chosen up front, so forms.domains.resolvers can name it. */
async function startOnOwnDns(): Promise<{ d: TestDaemon; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      const d = await startTestDaemon({
        dns: { listenAddr: '127.0.0.1', port, domain: 'example.test' },
        api: { publicURL: 'https://forms.service.test' },
        forms: { tenantTiers: { biz: 'business' }, deliveries: { enabled: false }, domains: { resolvers: [`127.0.0.1:${port}`], timeoutMs: 1000 } },
      } as never, { GSLB_API_KEY: SYS });
      return { d, port };
    } catch (err) {
      // the probed port may be taken (UDP or TCP) before the daemon binds it: try another
      if (attempt >= 4 || !/EADDRINUSE/.test(String(err))) throw err;
    }
  }
}

function postAs(d: TestDaemon, host: string, formId: string): Promise<number> {
  const url = new URL(`${d.url}/f/${formId}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end('{"a":1}');
  });
}

test('a domain in a zone gslbd serves: the workspace publishes the TXT challenge in gslbd and verify finds it through gslbd\'s DNS', async (t) => {
  const { d, port } = await startOnOwnDns();
  t.after(() => d.stop());
  assert.equal((await api(d.url, 'POST', '/api/v1/tenants', { id: 'biz' }, sys)).status, 201);
  const tenantKey = (await api(d.url, 'POST', '/api/v1/tenants/biz/apikeys', { name: 'dns' }, sys)).body.key as string;
  const call = publicClient(d, addFormKey(d, { tenantId: 'biz' }).key);

  const dom = (await call('POST', '/domain', { domain: 'forms.example.test' })).body;
  const challenge = dom.records.find((r: { type: string }) => r.type === 'TXT') as { name: string; value: string };
  assert.equal(challenge.name, '_gslbd-challenge.forms.example.test');
  const before = await call('POST', `/domain/${dom.id}/verify`, { domain_id: dom.id });
  assert.equal(before.status, 409);
  assert.match(before.body.message, /found no TXT record$/);

  // the workspace (tenant biz) publishes the record in gslbd's own zone
  const rec = await api(d.url, 'POST', '/api/v1/dns/txt', { name: challenge.name, values: [challenge.value] }, { authorization: `Bearer ${tenantKey}` });
  assert.equal(rec.status, 201, JSON.stringify(rec.body));
  assert.deepEqual((await dig(port, [challenge.name, 'TXT'])).answers, [`"${challenge.value}"`]);

  const ok = await call('POST', `/domain/${dom.id}/verify`, { domain_id: dom.id });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.status, 'active');
  const form = (await call('POST', '/form', { name: 'Branded' })).body.id as string;
  assert.equal(await postAs(d, 'forms.example.test', form), 200, 'the public endpoint answers under the verified domain');
});
