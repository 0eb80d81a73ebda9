import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { TestSmtp } from '../helpers/smtp.js';
import { sendPasswordReset } from '../../runtime/mail/reset.js';

const SECRET_KEY = '0f'.repeat(32);
const SYSTEM_KEY = 'system-key-for-mail-tests';
const auth = { authorization: `Bearer ${SYSTEM_KEY}` };
let smtp: TestSmtp;
let other: TestSmtp;
let d: TestDaemon;
let tplDir: string;

before(async () => {
  smtp = new TestSmtp();
  await smtp.start();
  other = new TestSmtp();
  await other.start();
  tplDir = mkdtempSync(join(tmpdir(), 'gslbd-tpl-'));
  writeFileSync(join(tplDir, 'password-reset.subject.liquid'), 'ACME GSLB password reset for {{ email }}');
  d = await startTestDaemon({
    auth: { bcryptCost: 10 },
    alerts: {
      smtp: [{ host: '127.0.0.1', port: other.port, from: 'file@example.test', to: ['file-ops@example.test'], startTls: false }],
      mailTemplatesDir: tplDir,
    },
  } as never, { GSLB_SECRET_KEY: SECRET_KEY, GSLB_API_KEY: SYSTEM_KEY });
});
after(async () => {
  await d?.stop();
  await smtp.stop();
  await other.stop();
  rmSync(tplDir, { recursive: true, force: true });
});

test('settings need credentials', async () => {
  assert.equal((await api(d.url, 'GET', '/api/v1/settings/smtp')).status, 401);
  assert.equal((await api(d.url, 'PUT', '/api/v1/settings/smtp', { host: 'x' })).status, 401);
  assert.equal((await api(d.url, 'POST', '/api/v1/settings/smtp/test', { to: 'a@b.c' })).status, 401);
  assert.equal((await api(d.url, 'DELETE', '/api/v1/settings/smtp')).status, 401);
});

test('settings:read and settings:write belong to tenant_admin: an operator gets 403', async () => {
  assert.ok((await api(d.url, 'POST', '/api/v1/auth/setup', { email: 'admin@example.test', password: 'admin-pass-1' })).status < 300);
  assert.ok((await api(d.url, 'POST', '/api/v1/users', { email: 'op@example.test', password: 'op-pass-123', role: 'operator' }, auth)).status < 300);
  const login = async (email: string, password: string) => ({ authorization: `Bearer ${(await api(d.url, 'POST', '/api/v1/auth/login', { email, password })).body.token}` });
  const admin = await login('admin@example.test', 'admin-pass-1');
  const op = await login('op@example.test', 'op-pass-123');
  assert.equal((await api(d.url, 'GET', '/api/v1/settings/smtp', undefined, op)).status, 403);
  assert.equal((await api(d.url, 'PUT', '/api/v1/settings/smtp', { host: 'h' }, op)).status, 403);
  assert.equal((await api(d.url, 'POST', '/api/v1/settings/smtp/test', { to: 'a@example.test' }, op)).status, 403);
  assert.equal((await api(d.url, 'DELETE', '/api/v1/settings/smtp', undefined, op)).status, 403);
  assert.equal((await api(d.url, 'GET', '/api/v1/settings/smtp', undefined, admin)).status, 200);
  assert.equal((await api(d.url, 'GET', '/api/v1/settings/smtp', undefined, admin)).body.source, 'file', 'the 403s changed nothing');
});

test('the file applies while nothing is stored', async () => {
  const r = await api(d.url, 'GET', '/api/v1/settings/smtp', undefined, auth);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { host: '127.0.0.1', port: other.port, from: 'file@example.test', to: ['file-ops@example.test'], username: '', hasPassword: false, tls: false, startTls: false, enabled: true, source: 'file' });
});

test('PUT stores, applies at once, never returns the password, encrypts it at rest', async () => {
  const put = await api(d.url, 'PUT', '/api/v1/settings/smtp', {
    host: '127.0.0.1', port: smtp.port, from: 'gslbd@example.test', to: ['ops@example.test'], username: 'mailer', password: 'pa55-word-xyz', startTls: false, tls: false, enabled: true,
  }, auth);
  assert.equal(put.status, 200);
  assert.equal(put.body.source, 'database');
  assert.equal(put.body.hasPassword, true);
  assert.equal('password' in put.body, false);
  const raw = new Database(join(d.dir, 'gslbd.db'), { readonly: true });
  const row = raw.prepare("SELECT json_extract(data, '$.password') AS password FROM resources WHERE kind = 'mailsettings' AND id = 'mail:system'").get() as { password: string };
  raw.close();
  assert.match(row.password, /^v2:/);
  assert.ok(!row.password.includes('pa55-word-xyz'));
  const get = await api(d.url, 'GET', '/api/v1/settings/smtp', undefined, auth);
  assert.equal(JSON.stringify(get.body).includes('pa55'), false);
  assert.equal(get.body.source, 'database');
  // a GET body sent back with an empty password keeps the stored one (same host, port and username)
  const again = await api(d.url, 'PUT', '/api/v1/settings/smtp', { ...get.body, password: '' }, auth);
  assert.equal(again.status, 200);
  assert.equal(again.body.hasPassword, true);
  // another username is another account: the stored password does not follow it
  const other = await api(d.url, 'PUT', '/api/v1/settings/smtp', { ...get.body, username: '', password: '' }, auth);
  assert.equal(other.status, 200);
  assert.equal(other.body.hasPassword, false);
  assert.equal(d.core.mail.configured(), true);
  assert.deepEqual(d.core.mail.alertRecipients?.(), ['ops@example.test']);
});

test('PUT rejects bad input with a clear 400 and changes nothing', async () => {
  const rows: [unknown, RegExp][] = [
    [{ host: '127.0.0.1', tls: true, startTls: true }, /cannot both be true/],
    [{ host: '127.0.0.1', to: ['not-an-address'] }, /^to\.0: must be a mail address/],
    [{ port: 25 }, /host is required/],
    [{ host: '127.0.0.1', port: 70000 }, /port/],
    [{ host: '127.0.0.1', bogus: 1 }, /unknown field "bogus"/],
  ];
  for (const [body, want] of rows) {
    const r = await api(d.url, 'PUT', '/api/v1/settings/smtp', body, auth);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.error, want);
  }
  assert.equal((await api(d.url, 'GET', '/api/v1/settings/smtp', undefined, auth)).body.port, smtp.port);
});

test('POST /settings/smtp/test sends with the saved settings and returns the server answer', async () => {
  const before = smtp.messages.length;
  const r = await api(d.url, 'POST', '/api/v1/settings/smtp/test', { to: 'tester@example.test' }, auth);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.ok, true);
  assert.deepEqual(r.body.accepted, ['tester@example.test']);
  assert.match(r.body.response, /^250 /);
  const msgs = await smtp.waitFor(before + 1);
  assert.deepEqual(msgs.at(-1)!.rcptTo, ['tester@example.test']);
  assert.equal(msgs.at(-1)!.subject, 'gslbd test message');
});

test('the test endpoint reports the error detail when the server cannot be reached', async () => {
  await api(d.url, 'PUT', '/api/v1/settings/smtp', { host: '127.0.0.1', port: 1, from: 'gslbd@example.test', startTls: false }, auth);
  const r = await api(d.url, 'POST', '/api/v1/settings/smtp/test', { to: 'tester@example.test' }, auth);
  assert.equal(r.status, 502);
  assert.match(r.body.error, /ECONNECTION|ECONNREFUSED/);
});

test('password-reset mail uses the operator template and the live settings', async () => {
  await api(d.url, 'PUT', '/api/v1/settings/smtp', { host: '127.0.0.1', port: smtp.port, from: 'gslbd@example.test', to: ['ops@example.test'], startTls: false }, auth);
  const before = smtp.messages.length;
  await sendPasswordReset(d.core, 'ann@example.test', 'https://gslb.example.test/ui/reset?token=tok-123', { expiresInMinutes: 15 });
  const m = (await smtp.waitFor(before + 1)).at(-1)!;
  assert.deepEqual(m.rcptTo, ['ann@example.test']);
  assert.equal(m.subject, 'ACME GSLB password reset for ann@example.test');
  assert.match(m.text, /https:\/\/gslb\.example\.test\/ui\/reset\?token=tok-123/);
  assert.match(m.text, /within 15 minutes/);
  assert.match(m.html ?? '', /href="https:\/\/gslb\.example\.test\/ui\/reset\?token=tok-123"/);
});

test('enabled=false switches mail off and keeps the settings', async () => {
  const r = await api(d.url, 'PUT', '/api/v1/settings/smtp', { host: '127.0.0.1', port: smtp.port, from: 'gslbd@example.test', to: ['ops@example.test'], startTls: false, enabled: false }, auth);
  assert.equal(r.body.enabled, false);
  assert.equal(d.core.mail.configured(), false);
  await assert.rejects(sendPasswordReset(d.core, 'ann@example.test', 'https://x.test/r'), /switched off/);
  assert.equal((await api(d.url, 'GET', '/api/v1/settings/smtp', undefined, auth)).body.host, '127.0.0.1');
});

test('DELETE clears the stored settings and mail is off until restart', async () => {
  const r = await api(d.url, 'DELETE', '/api/v1/settings/smtp', undefined, auth);
  assert.equal(r.status, 204);
  const get = await api(d.url, 'GET', '/api/v1/settings/smtp', undefined, auth);
  assert.equal(get.body.source, 'none');
  assert.equal(d.core.mail.configured(), false);
  const t = await api(d.url, 'POST', '/api/v1/settings/smtp/test', { to: 'a@example.test' }, auth);
  assert.equal(t.status, 400);
  assert.ok(!d.logs.text().includes('pa55-word-xyz'), 'the password never reaches the log');
});
