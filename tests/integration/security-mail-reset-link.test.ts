import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { RecordingRelay } from './security-mail-recorder.js';

// The reset link's origin is api.publicURL, never the request's Host header (docs/auth.md
// "Password reset"); without publicURL a reset is refused for every address.
let relay: RecordingRelay;
const daemons: TestDaemon[] = [];

/** POST with headers fetch would not let us forge (Host). */
function post(url: string, path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function daemon(publicURL: string | undefined): Promise<TestDaemon> {
  const d = await startTestDaemon({
    auth: { bcryptCost: 10 },
    api: { ...(publicURL ? { publicURL } : {}), trustedProxies: ['127.0.0.1/32'] },
    alerts: { smtp: [{ host: '127.0.0.1', port: relay.port, from: 'gslbd@example.test', to: ['ops@example.test'], startTls: false }] },
  } as never);
  daemons.push(d);
  assert.ok((await api(d.url, 'POST', '/api/v1/auth/setup', { email: 'victim@example.test', password: 'victim-pass-1' })).status < 300);
  return d;
}

before(async () => { relay = await new RecordingRelay().start(); });
after(async () => {
  for (const d of daemons) await d.stop();
  await relay.stop();
});

test('a forged Host (and forwarded host) does not change the link: api.publicURL is its origin', async () => {
  const d = await daemon('https://gslb.example.test:8443/');
  const forgeries: Record<string, string>[] = [
    { host: 'evil.example' },
    { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' },
  ];
  for (const [i, headers] of forgeries.entries()) {
    const r = await post(d.url, '/api/v1/auth/password-reset', { email: 'victim@example.test' }, headers);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const m = (await relay.waitFor(i + 1)).at(-1)!;
    assert.deepEqual(m.rcptTo, ['victim@example.test']);
    const links = [...`${m.text}\n${m.html ?? ''}`.matchAll(/https?:\/\/[^\s"<]+/g)].map((x) => x[0]);
    assert.ok(links.length > 0);
    for (const l of links) assert.match(l, /^https:\/\/gslb\.example\.test:8443\/ui\/login\?reset=[^\s"<]+$/, `link ${l}`);
    assert.ok(!`${m.text}${m.html}`.includes('evil.example'));
  }
});

test('without api.publicURL every reset answers 503, sends nothing, and the log says why', async () => {
  const d = await daemon(undefined);
  const sent = relay.messages.length;
  for (const email of ['victim@example.test', 'nobody@example.test']) {
    const r = await api(d.url, 'POST', '/api/v1/auth/password-reset', { email });
    assert.equal(r.status, 503);
    assert.deepEqual(r.body, { error: 'password reset is not available: api.publicURL is not set' });
  }
  const lines = d.logs.lines.filter((l) => l.msg === 'password reset refused');
  assert.equal(lines.length, 2, 'one warning per request');
  for (const l of lines) assert.deepEqual([l.level, l.reason], [40, 'api.publicURL is not set']);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(relay.messages.length, sent, 'no mail went out');
});
