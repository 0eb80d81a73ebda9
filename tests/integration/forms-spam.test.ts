import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { addFormKey, publicClient } from './forms-fixture.js';
import { settlesBeforeHang } from '../helpers/wait.js';

// Each spam defence of forms-api.md §3 rule 7 (docs/forms.md "Spam") through the real HTTP
// server: a spam post gets exactly the answer of a good one, is stored flagged with its reason,
// is listed only with getSpam, queues no delivery and costs the plan nothing.

let d: TestDaemon;
let siteverify: Server;
const verified: URLSearchParams[] = [];
let answer: (token: string) => { status: number; body: string } = () => ({ status: 200, body: '{"success":true,"score":0.9}' });
const dir = mkdtempSync(join(tmpdir(), 'gslbd-spam-'));
let workspaces = 0;

before(async () => {
  siteverify = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      verified.push(form);
      const a = answer(form.get('response') ?? '');
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
    });
  });
  await new Promise<void>((r) => siteverify.listen(0, '127.0.0.1', r));
  const extra = join(dir, 'disposable.txt');
  writeFileSync(extra, '# ours\ntrash-mail.test\n!mailinator.com\n');
  d = await startTestDaemon({
    forms: {
      defaultTier: 'pro',
      rateLimits: { perIpPerMinute: 100_000 },
      deliveries: { enabled: false },
      recaptcha: { secret: 'site-secret-123', verifyURL: `http://127.0.0.1:${(siteverify.address() as AddressInfo).port}/siteverify`, timeoutMs: 500 },
      spam: { disposableDomainsFile: extra },
    },
  } as never);
});
after(async () => {
  await d?.stop();
  siteverify?.closeAllConnections();
  await new Promise((r) => siteverify.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** A form of a fresh workspace with these settings, and one webhook action. */
async function setup(settings: Record<string, unknown>) {
  const call = publicClient(d, addFormKey(d, { tenantId: `spam${++workspaces}` }).key);
  const res = await call('POST', '/form', { name: 'Spam test', ...settings });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const id = res.body.id as string;
  assert.equal((await call('POST', `/form/${id}/action`, { form_id: id, type: 'webhook', config: { url: 'https://example.com/hook' } })).status, 201);
  return { call, id };
}

/** Posts like a browser (url-encoded, no JSON accept) and returns status and Location. */
async function browserPost(id: string, fields: Record<string, string>) {
  const res = await fetch(`${d.url}/f/${id}`, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
  await res.arrayBuffer();
  return [res.status, res.headers.get('location')];
}

/** The verdicts of a form's submissions, oldest first: [spam, reason]. */
async function verdicts(call: ReturnType<typeof publicClient>, id: string) {
  const res = await call('GET', `/form/${id}/submission?getSpam=true&order=asc`);
  return res.body.data.map((s: { spam: boolean; spam_reason: string | null }) => [s.spam, s.spam_reason]);
}
const queued = (id: string) => (d.core.db.prepare('SELECT COUNT(*) AS n FROM form_deliveries WHERE form_id = ?').get(id) as { n: number }).n;

test('honeypot (default fc_honeypot, or the form\'s own field): same redirect as a good post, stored as spam, listed only with getSpam, nothing queued', async () => {
  const { call, id } = await setup({});
  const good = await browserPost(id, { email: 'a@example.com', fc_honeypot: '' });
  const bot = await browserPost(id, { email: 'a@example.com', fc_honeypot: 'http://buy.example' });
  assert.deepEqual(bot, good);
  assert.deepEqual(await verdicts(call, id), [[false, null], [true, 'honeypot field filled']]);
  assert.equal((await call('GET', `/form/${id}/submission`)).body.total, 1);
  assert.equal(queued(id), 1);
  const own = await setup({ honeypot_field: 'website' });
  await browserPost(own.id, { email: 'a@example.com', fc_honeypot: 'ignored', website: 'x' });
  assert.deepEqual(await verdicts(own.call, own.id), [[true, 'honeypot field filled']]);
  assert.equal((await call('GET', '/plan')).body.usage.submissions_this_month, 1, 'spam is not counted');
});

test('max_links: more links than allowed is spam; 0 switches the check off', async () => {
  const { call, id } = await setup({ max_links: 2 });
  await browserPost(id, { m: 'see https://a.example and www.b.example' });
  await browserPost(id, { m: 'https://a.example http://b.example', n: 'www.c.example' });
  assert.deepEqual(await verdicts(call, id), [[false, null], [true, '3 links (at most 2 allowed)']]);
  const off = await setup({ max_links: 0 });
  await browserPost(off.id, { m: 'https://a.example '.repeat(20) });
  assert.deepEqual(await verdicts(off.call, off.id), [[false, null]]);
});

test('block_disposable_emails: the maintained list plus the operator file (added and removed domains); off by default', async () => {
  const { call, id } = await setup({ block_disposable_emails: true });
  for (const email of ['a@example.com', 'b@guerrillamail.com', 'c@sub.trash-mail.test', 'd@mailinator.com']) await browserPost(id, { email });
  assert.deepEqual(await verdicts(call, id), [
    [false, null],
    [true, 'disposable e-mail address (guerrillamail.com)'],
    [true, 'disposable e-mail address (sub.trash-mail.test)'],
    [false, null],
  ]);
  const off = await setup({});
  await browserPost(off.id, { email: 'b@guerrillamail.com' });
  assert.deepEqual(await verdicts(off.call, off.id), [[false, null]]);
});

test('max_per_email_per_hour: the address\'s next post past the limit is spam; other addresses are not', async () => {
  const { call, id } = await setup({ max_per_email_per_hour: 2 });
  for (const email of ['a@example.com', 'A@Example.com', 'a@example.com', 'b@example.com']) await browserPost(id, { email });
  assert.deepEqual(await verdicts(call, id), [
    [false, null], [false, null], [true, '3 submissions from this address in the last hour (at most 2 allowed)'], [false, null],
  ]);
});

test('blocked_ips: an address or CIDR range is spam (the tests post from 127.0.0.1)', async () => {
  const { call, id } = await setup({ blocked_ips: ['10.0.0.0/8', '127.0.0.0/8'] });
  await browserPost(id, { a: '1' });
  assert.deepEqual(await verdicts(call, id), [[true, 'address 127.0.0.1 is blocked (127.0.0.0/8)']]);
  const other = await setup({ blocked_ips: ['192.0.2.1', '2001:db8::/32'] });
  await browserPost(other.id, { a: '1' });
  assert.deepEqual(await verdicts(other.call, other.id), [[false, null]]);
});

test('recaptcha_min_score: the token is verified with the configured siteverify; low, failed, missing and unverifiable tokens are spam; the token is not stored', async () => {
  const { call, id } = await setup({ recaptcha_min_score: 0.5 });
  answer = (token) => {
    if (token === 'good') return { status: 200, body: '{"success":true,"score":0.9,"action":"submit"}' };
    if (token === 'low') return { status: 200, body: '{"success":true,"score":0.1}' };
    if (token === 'bad') return { status: 200, body: '{"success":false,"error-codes":["invalid-input-response"]}' };
    if (token === 'broken') return { status: 500, body: 'oops' };
    return { status: 200, body: 'not json' };
  };
  verified.length = 0;
  for (const t of ['good', 'low', 'bad', 'broken', 'garbled']) await browserPost(id, { email: 'a@example.com', 'g-recaptcha-response': t });
  await browserPost(id, { email: 'a@example.com' });
  assert.deepEqual(await verdicts(call, id), [
    [false, null],
    [true, 'recaptcha score 0.1 is below 0.5'],
    [true, 'recaptcha verification failed (invalid-input-response)'],
    [true, 'recaptcha verification unavailable (HTTP 500)'],
    [true, 'recaptcha verification unavailable (the answer is not JSON)'],
    [true, 'recaptcha token missing'],
  ]);
  assert.deepEqual(verified.map((f) => [f.get('secret'), f.get('response'), f.get('remoteip')]), [
    ['site-secret-123', 'good', '127.0.0.1'], ['site-secret-123', 'low', '127.0.0.1'], ['site-secret-123', 'bad', '127.0.0.1'],
    ['site-secret-123', 'broken', '127.0.0.1'], ['site-secret-123', 'garbled', '127.0.0.1'],
  ]);
  const list = (await call('GET', `/form/${id}/submission?getSpam=true&order=asc`)).body.data;
  assert.deepEqual(list[0].data, { email: 'a@example.com' }, 'the token is checked, not kept');
  assert.ok(!d.logs.text().includes('site-secret-123'), 'the secret is never logged');
});

test('recaptcha: a verification that takes too long is spam after forms.recaptcha.timeoutMs, and the post is still answered', async () => {
  const slow = createServer(() => { /* never answers */ });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  const late = await startTestDaemon({
    forms: { defaultTier: 'pro', recaptcha: { secret: 's', verifyURL: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`, timeoutMs: 300 } },
  } as never);
  try {
    const lateCall = publicClient(late, addFormKey(late).key);
    const f = (await lateCall('POST', '/form', { name: 'Late', recaptcha_min_score: 0.5 })).body.id as string;
    // the verifier never answers: only the timeout can end the check (the reason below says it did)
    const res = await settlesBeforeHang('a post whose verification never answers', fetch(`${late.url}/f/${f}`, { method: 'POST', headers: { accept: 'application/json' }, body: new URLSearchParams({ 'g-recaptcha-response': 'x' }) }));
    assert.equal(res.status, 200);
    const [s] = (await lateCall('GET', `/form/${f}/submission?getSpam=true`)).body.data;
    assert.deepEqual([s.spam, s.spam_reason], [true, 'recaptcha verification unavailable (no answer within 300 ms)']);
  } finally {
    await late.stop();
    slow.closeAllConnections();
    await new Promise((r) => slow.close(r));
  }
});

test('recaptcha_min_score needs a server that can verify tokens: 400 without forms.recaptcha.secret', async () => {
  const bare = await startTestDaemon({ forms: { defaultTier: 'pro' } } as never);
  try {
    const call = publicClient(bare, addFormKey(bare).key);
    const res = await call('POST', '/form', { name: 'Captcha', recaptcha_min_score: 0.5 });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'recaptcha_min_score: this server cannot verify reCAPTCHA tokens (forms.recaptcha.secret is not set)');
  } finally {
    await bare.stop();
  }
});
