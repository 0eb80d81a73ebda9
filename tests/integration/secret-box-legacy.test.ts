import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { authenticator } from 'otplib';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import type { AlertsInfo } from '../../runtime/alerts/part.js';
import { SYSTEM_MAIL } from '../../runtime/mail/owner.js';

const SYS = randomBytes(32).toString('hex');
const KEY = randomBytes(32).toString('hex');
const ENV = { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: KEY };
const auth = { authorization: `Bearer ${SYS}` };

/** AES-256-GCM as the two former helpers wrote it: TOTP `v1` (base64url, no AAD), SMTP `gcm1` (base64, fixed AAD). */
function legacySeal(format: 'v1' | 'gcm1', plain: string): string {
  const enc = format === 'v1' ? 'base64url' : 'base64';
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', Buffer.from(KEY, 'hex'), iv);
  if (format === 'gcm1') c.setAAD(Buffer.from('gslbd:smtp-password'));
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return [format, iv.toString(enc), c.getAuthTag().toString(enc), ct.toString(enc)].join(':');
}

/** Stored secrets of the TOTP user and of the server-wide mail row, read or replaced in the stopped daemon's database. */
function storedSecrets(dbPath: string, replace?: { totpSecret: string; password: string }) {
  const db = new Database(dbPath);
  try {
    if (replace) {
      // totpLastStep 0: the code of the current step counts as unused after the restart
      db.prepare("UPDATE resources SET data = json_set(data, '$.totpSecret', ?, '$.totpLastStep', 0) WHERE kind = 'user' AND json_extract(data, '$.email') = 't@example.test'").run(replace.totpSecret);
      db.prepare("UPDATE resources SET data = json_set(data, '$.password', ?) WHERE kind = 'mailsettings' AND id = 'mail:system'").run(replace.password);
    }
    const user = db.prepare("SELECT json_extract(data, '$.totpSecret') AS s FROM resources WHERE kind = 'user' AND json_extract(data, '$.email') = 't@example.test'").get() as { s: string };
    const mail = db.prepare("SELECT json_extract(data, '$.password') AS s FROM resources WHERE kind = 'mailsettings' AND id = 'mail:system'").get() as { s: string };
    return { totpSecret: user.s, password: mail.s };
  } finally {
    db.close();
  }
}

const smtpBody = { host: '127.0.0.1', port: 2525, from: 'g@example.test', to: ['ops@example.test'], username: 'mailer', password: 'smtp-pass-1', tls: false, startTls: false, enabled: true };

test('secrets sealed by the former helpers still open; a sealed value does not open for another purpose', async () => {
  const first = await startTestDaemon({}, ENV);
  const dbPath = join(first.dir, 'gslbd.db');
  let d: TestDaemon | undefined;
  try {
    // a TOTP user and stored mail settings, sealed by this version (v2)
    await api(first.url, 'POST', '/api/v1/auth/setup', { email: 'root@example.test', password: 'root-pass-123' });
    assert.equal((await api(first.url, 'POST', '/api/v1/users', { email: 't@example.test', password: 'totp-user-pw1', role: 'operator' }, auth)).status, 201);
    const S = { authorization: `Bearer ${(await api(first.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1' })).body.token}` };
    const secret: string = (await api(first.url, 'POST', '/api/v1/auth/totp/setup', undefined, S)).body.secret;
    assert.equal((await api(first.url, 'POST', '/api/v1/auth/totp/verify', { code: authenticator.generate(secret) }, S)).status, 200);
    assert.equal((await api(first.url, 'PUT', '/api/v1/settings/smtp', smtpBody, auth)).status, 200);
    await first.close();
    const current = storedSecrets(dbPath);
    assert.match(current.totpSecret, /^v2:/);
    assert.match(current.password, /^v2:/);

    // 1. the TOTP secret sealed as the mail password and the reverse: neither opens
    storedSecrets(dbPath, { totpSecret: current.password, password: current.totpSecret });
    d = await startTestDaemon({ database: { path: dbPath } }, ENV);
    const swapped = await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1', totpCode: authenticator.generate(secret) });
    assert.equal(swapped.status, 500, 'never a wrong-code answer');
    assert.match(swapped.body.error, /TOTP cannot be checked on this node/);
    assert.match(d.logs.text(), /stored mail password unreadable/);
    await d.close();

    // 2. values written by the former helpers (v1 TOTP, gcm1 mail) open after the upgrade
    storedSecrets(dbPath, { totpSecret: legacySeal('v1', secret), password: legacySeal('gcm1', 'smtp-pass-1') });
    d = await startTestDaemon({ database: { path: dbPath } }, ENV);
    assert.doesNotMatch(d.logs.text(), /stored mail password unreadable/);
    assert.equal((d.core.ports.alerts as AlertsInfo).mail.current(SYSTEM_MAIL).settings?.password, 'smtp-pass-1');
    const login = await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1', totpCode: authenticator.generate(secret) });
    assert.equal(login.status, 200, JSON.stringify(login.body));

    // the next write of the mail settings (a PUT keeping the password) seals it as v2 through a plan
    const view = (await api(d.url, 'GET', '/api/v1/settings/smtp', undefined, auth)).body;
    assert.equal((await api(d.url, 'PUT', '/api/v1/settings/smtp', { ...view, password: '' }, auth)).status, 200);
    await d.close();
    d = undefined;
    const after = storedSecrets(dbPath);
    assert.match(after.password, /^v2:/);
    assert.match(after.totpSecret, /^v1:/, 'a TOTP secret is re-sealed only when it is written again (enrolment)');
  } finally {
    await d?.stop();
    await first.stop();
  }
});
