import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { authenticator } from 'otplib';
import { startTestDaemon, api } from '../helpers/daemon.js';
import { validateConfigObject } from '../../runtime/config/load.js';
import { startDaemon } from '../../runtime/daemon.js';
import { pino } from 'pino';

const SYS = randomBytes(32).toString('hex');
const KEY = randomBytes(32).toString('hex');
/** The code the test's own authenticator shows at `at` (independent of runtime/auth/totp.ts). */
const codeAt = (secret: string, at: number) => authenticator.clone({ epoch: at }).generate(secret);

test('TOTP: enrol, login needs the code, one step of skew, no replay, PUT clears it, start refused without key', async () => {
  const d = await startTestDaemon({ auth: { bcryptCost: 10 }, api: { trustedProxies: ['127.0.0.1/32'] } } as never, { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: KEY });
  const secrets = new Set<string>([SYS, KEY, 'totp-user-pw1']);
  let dbPath = '';
  try {
    dbPath = d.core.config.database.path;
    await api(d.url, 'POST', '/api/v1/auth/setup', { email: 'root@example.test', password: 'root-pass-123' });
    secrets.add('root-pass-123');
    const u = await api(d.url, 'POST', '/api/v1/users', { email: 't@example.test', password: 'totp-user-pw1', role: 'operator' }, { authorization: `Bearer ${SYS}` });
    // a trusted proxy's X-Forwarded-Proto https makes the cookie Secure
    const first = await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1' }, { 'x-forwarded-proto': 'https' });
    assert.equal(first.status, 200);
    assert.match(first.headers.get('set-cookie')!, /; Secure$/);
    const S = { cookie: `gslb_session=${first.body.token}` };
    secrets.add(first.body.token);

    // the system key has no account to enrol
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/totp/setup', undefined, { authorization: `Bearer ${SYS}` })).status, 403);
    const setup = await api(d.url, 'POST', '/api/v1/auth/totp/setup', undefined, S);
    assert.equal(setup.status, 200);
    const secret: string = setup.body.secret;
    secrets.add(secret);
    assert.match(secret, /^[A-Z2-7]+$/);
    assert.ok(setup.body.qrPng.startsWith('data:image/png;base64,'));
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/totp/verify', { code: '000000' === codeAt(secret, Date.now()) ? '111111' : '000000' }, S)).status, 400);
    // not active until verified
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1' })).status, 200);
    const verify = await api(d.url, 'POST', '/api/v1/auth/totp/verify', { code: codeAt(secret, Date.now()) }, S);
    assert.equal(verify.status, 200);
    assert.deepEqual(verify.body, { totpEnabled: true });

    // stored encrypted (in the user row of `resources`)
    const row = d.core.db.prepare("SELECT json_extract(data, '$.totpSecret') AS totp_secret FROM resources WHERE kind = 'user' AND json_extract(data, '$.email') = ?")
      .get('t@example.test') as { totp_secret: string };
    assert.ok(row.totp_secret.startsWith('v2:') && !row.totp_secret.includes(secret));

    // password alone: 401 {error, mfaRequired: true}
    const noCode = await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1' });
    assert.equal(noCode.status, 401);
    assert.deepEqual(noCode.body, { error: 'a TOTP code is required', mfaRequired: true });
    // wrong password with a code is still a plain wrong-credentials answer
    assert.deepEqual((await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'wrong-pass-12', totpCode: '123456' })).body, { error: 'invalid email or password' });

    // a code two steps old is refused; one step old (clock skew) is accepted once
    const now = Date.now();
    const old2 = await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1', totpCode: codeAt(secret, now - 60_000) });
    assert.equal(old2.status, 401);
    assert.equal(old2.body.mfaRequired, true);
    // the enrolment code's step is used already; the next step's code (one step ahead) works
    const ahead = codeAt(secret, now + 30_000);
    const ok = await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1', totpCode: ahead });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    secrets.add(ok.body.token);
    const replay = await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1', totpCode: ahead });
    assert.equal(replay.status, 401);
    assert.deepEqual(replay.body, { error: 'this TOTP code was already used; wait for the next one', mfaRequired: true });

    // PUT /users/{id} clears TOTP
    const put = await api(d.url, 'PUT', `/api/v1/users/${u.body.userId}`, { displayName: 'T' }, { authorization: `Bearer ${SYS}` });
    assert.equal(put.body.totpEnabled, false);
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/login', { email: 't@example.test', password: 'totp-user-pw1' })).status, 200);

    // enrol again so a TOTP user exists for the start check
    const again = await api(d.url, 'POST', '/api/v1/auth/totp/setup', undefined, { authorization: `Bearer ${ok.body.token}` });
    secrets.add(again.body.secret);
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/totp/verify', { code: codeAt(again.body.secret, Date.now()) }, { authorization: `Bearer ${ok.body.token}` })).status, 200);
    const logs = d.logs.text();
    for (const s of secrets) assert.ok(!logs.includes(s), `secret …${s.slice(-4)} in logs`);
  } finally {
    await d.close();
  }

  // the same database without GSLB_SECRET_KEY: the daemon refuses to start
  const config = validateConfigObject({ database: { path: dbPath }, api: { enabled: false }, dns: { listenAddr: '127.0.0.1', port: 1 }, node: { id: 'n' } });
  config.dns.port = 0;
  const quiet = pino({ level: 'silent' });
  await assert.rejects(startDaemon(config, { log: quiet, env: { GSLB_API_KEY: SYS } }), /GSLB_SECRET_KEY is unset but users with TOTP exist/);
  // and with the key it starts
  const ok = await startDaemon(config, { log: quiet, env: { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: KEY } });
  await ok.close();
  await d.stop();
});
