import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/proc.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// The SSRF guard of form actions (docs/forms.md "Deliveries", docs/security.md): loopback,
// private, link-local (cloud metadata), CGNAT and the IPv6 equivalents are refused, by literal
// address or by a name resolving to one; redirects are never followed; an operator allows its own
// ranges with forms.deliveries.allowPrivateTargets, and only those.

let d: TestDaemon;
let allowing: TestDaemon;
let redirector: Server;
let hits = 0;
let port = 0;

before(async () => {
  redirector = createServer((req, res) => {
    hits++;
    const location = req.url === '/to-loopback' ? 'http://[::1]:9/internal?token=sekrit' : 'http://169.254.169.254/latest/meta-data/';
    res.writeHead(req.url === '/ok' ? 200 : 302, { location }).end();
  });
  await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
  port = (redirector.address() as AddressInfo).port;
  d = await startTestDaemon({ forms: { deliveries: { timeoutMs: 2000 } } } as never);
  allowing = await startTestDaemon({ forms: { deliveries: { allowPrivateTargets: ['127.0.0.1/32'], timeoutMs: 2000 } } } as never);
});
after(async () => {
  try {
    await d?.stop();
    await allowing?.stop();
  } finally {
    redirector.closeAllConnections();
    await new Promise((r) => redirector.close(r));
  }
});

/** Runs a webhook action to `url` once (POST /action/{id}/test) and returns the outcome. */
let runs = 0;
async function testRun(url: string, daemon = d) {
  const call = publicClient(daemon, addFormKey(daemon, { tenantId: `ssrf${++runs}` }).key);
  const form = (await call('POST', '/form', { name: 'SSRF' })).body.id as string;
  const action = (await call('POST', `/form/${form}/action`, { form_id: form, type: 'webhook', config: { url } })).body.id as string;
  const res = await call('POST', `/action/${action}/test`, { action_id: action, data: { a: 1 } });
  assert.equal(res.status, 200);
  return res.body as { ok: boolean; status: number | null; detail: string };
}

const REFUSED: [string, RegExp][] = [
  ['http://127.0.0.2:9/', /refused: 127\.0\.0\.2 is a private or reserved address/],
  ['http://169.254.169.254/latest/meta-data/', /refused: 169\.254\.169\.254 is a private or reserved address/],
  ['http://[::1]:9/', /refused: ::1 is a private or reserved address/],
  ['http://10.1.2.3/', /refused: 10\.1\.2\.3/],
  ['http://100.64.0.1/', /refused: 100\.64\.0\.1/],
  ['http://192.168.1.1/', /refused: 192\.168\.1\.1/],
  ['http://[fd00::1]/', /refused: fd00::1/],
  ['http://[::ffff:169.254.169.254]/', /refused: ::ffff:a9fe:a9fe is a private or reserved address/],
  ['http://localhost:9/', /refused: localhost resolves to a private or reserved address/],
];
for (const [url, want] of REFUSED) {
  test(`refused: ${url}`, async () => {
    const out = await testRun(url);
    assert.equal(out.ok, false);
    assert.match(out.detail, want);
  });
}

test('a redirect to a private address is not followed; the allowed range itself is reached', async () => {
  const before = hits;
  assert.match((await testRun(`http://127.0.0.1:${port}/hook`)).detail, /refused: 127\.0\.0\.1/, 'not without the operator\'s allowance');
  const out = await testRun(`http://127.0.0.1:${port}/hook`, allowing);
  assert.deepEqual([out.ok, out.status], [false, 302]);
  assert.match(out.detail, /answered 302 \(redirects are not followed\)/);
  assert.equal(hits, before + 1, 'one request, to the allowed address only');
  const ok = await testRun(`http://127.0.0.1:${port}/ok`, allowing);
  assert.deepEqual([ok.ok, ok.status], [true, 200]);
});

test('a delivery the guard refuses says why, in last_error and in its attempt: a refused address, and a redirect toward loopback', async () => {
  const cases: [TestDaemon, string, number | null, RegExp][] = [
    [d, 'http://127.0.0.2:9/hook', null, /^refused: 127\.0\.0\.2 is a private or reserved address$/],
    [allowing, `http://127.0.0.1:${port}/to-loopback`, 302, new RegExp(`^127\\.0\\.0\\.1:${port} answered 302 \\(redirects are not followed\\): redirect to \\[::1\\]:9 refused: ::1 is a private or reserved address$`)],
  ];
  for (const [daemon, url, status, want] of cases) {
    const call = publicClient(daemon, addFormKey(daemon, { tenantId: `ssrf${++runs}` }).key);
    const form = (await call('POST', '/form', { name: 'SSRF' })).body.id as string;
    const action = (await call('POST', `/form/${form}/action`, { form_id: form, type: 'webhook', config: { url } })).body.id as string;
    const post = await fetch(`${daemon.url}/f/${form}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{"a":1}' });
    assert.equal(post.status, 200);
    const dl = await waitFor(async () => (await call('GET', `/action/${action}/deliveries?state=failed`)).body.data[0], 10000);
    assert.equal(dl.attempts, 1, 'a refusal is not retried');
    assert.equal(dl.last_status, status);
    assert.match(dl.last_error ?? 'null', want);
    assert.doesNotMatch(dl.last_error, /sekrit|internal/, 'the redirect is named by its host only');
    assert.deepEqual(dl.attempt_history.map((a: { outcome: string; status: number | null; error: string }) => [a.outcome, a.status, a.error]), [['failed', status, dl.last_error]]);
  }
});
