import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestDaemon, api } from '../helpers/daemon.js';
import type { MailMessage } from '../../runtime/ports/mail.js';
import { waitUntil } from '../helpers/wait.js';

const SYS = randomBytes(32).toString('hex');
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

function assertNoSecrets(text: string, secrets: Iterable<string>) {
  for (const s of secrets) assert.ok(!text.includes(s), `a secret ending in …${s.slice(-4)} appears in a log line`);
}

test('setup, login, cookie, sliding expiry, logout, users, reset, limits and audit', async () => {
  const audit = join((await import('node:os')).tmpdir(), `gslbd-audit-${process.pid}-${Date.now()}.log`);
  const d = await startTestDaemon({ auth: { bcryptCost: 10, sessionTTL: '3s' }, api: { publicURL: 'https://gslb.example.test' } } as never, { GSLB_API_KEY: SYS, GSLB_AUDIT_LOG: audit });
  const secrets = new Set<string>([SYS, 'first-admin-pw', 'operator-pw-1', 'new-op-pw-12', 'reset-pw-123']);
  try {
    // setup: only while no user exists
    const setup = await api(d.url, 'POST', '/api/v1/auth/setup', { email: 'Admin@Example.test', password: 'first-admin-pw', displayName: 'Ada' });
    assert.equal(setup.status, 201);
    assert.equal(setup.body.role, 'tenant_admin');
    assert.equal(setup.body.tenantId, 'default');
    assert.equal(setup.body.password, undefined);
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/setup', { email: 'b@example.test', password: 'second-pw-12' })).status, 404);

    // bcrypt hashes in the database (the user row in `resources`), never the password
    const rows = d.core.db.prepare("SELECT json_extract(data, '$.email') AS email, json_extract(data, '$.passwordHash') AS password_hash, origin FROM resources WHERE kind = 'user'")
      .all() as { email: string; password_hash: string; origin: string }[];
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.origin, 'api');
    assert.match(rows[0]!.password_hash, /^\$2[aby]\$10\$.{53}$/);
    assert.ok(!JSON.stringify(rows).includes('first-admin-pw'));

    // login: {token, userId, role, expiresAt} + HttpOnly SameSite=Lax cookie (no Secure over plain http)
    const before = Math.floor(Date.now() / 1000);
    const login = await api(d.url, 'POST', '/api/v1/auth/login', { email: 'admin@example.test', password: 'first-admin-pw' });
    assert.equal(login.status, 200);
    assert.deepEqual(Object.keys(login.body).sort(), ['expiresAt', 'role', 'token', 'userId']);
    assert.ok(Number.isInteger(login.body.expiresAt) && login.body.expiresAt >= before + 1 && login.body.expiresAt <= before + 4);
    const token: string = login.body.token;
    secrets.add(token);
    const cookie = login.headers.get('set-cookie')!;
    assert.match(cookie, /^gslb_session=[\w-]+; Path=\/; HttpOnly; SameSite=Lax$/);
    // the session store holds only the SHA-256 hex of the token
    assert.ok(await d.core.sessions.get(createHash('sha256').update(token).digest('hex')));
    assert.equal(await d.core.sessions.get(token), undefined);

    // sliding window: a request every second keeps a 3 s session alive well past 3 s
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal((await api(d.url, 'GET', '/api/v1/auth/me', undefined, { cookie: `gslb_session=${token}` })).status, 200, `use ${i}`);
    }
    // idle longer than the TTL: expired → 401
    await new Promise((r) => setTimeout(r, 3300));
    const expired = await api(d.url, 'GET', '/api/v1/auth/me', undefined, bearer(token));
    assert.equal(expired.status, 401);
    assert.deepEqual(expired.body, { error: 'invalid or expired credentials' });

    // Secure when a trusted proxy says https — and not when an untrusted client says so
    const spoof = await api(d.url, 'POST', '/api/v1/auth/login', { email: 'admin@example.test', password: 'first-admin-pw' }, { 'x-forwarded-proto': 'https' });
    assert.ok(!spoof.headers.get('set-cookie')!.includes('Secure'));
    secrets.add(spoof.body.token);

    // wrong credentials: 401 {error}, same for unknown account
    const bad = await api(d.url, 'POST', '/api/v1/auth/login', { email: 'admin@example.test', password: 'nope-nope-1' });
    assert.equal(bad.status, 401);
    assert.deepEqual(bad.body, { error: 'invalid email or password' });
    assert.deepEqual((await api(d.url, 'POST', '/api/v1/auth/login', { email: 'ghost@example.test', password: 'nope-nope-1' })).body, { error: 'invalid email or password' });

    // logout revokes at once
    const t2 = (await api(d.url, 'POST', '/api/v1/auth/login', { email: 'admin@example.test', password: 'first-admin-pw' })).body.token as string;
    secrets.add(t2);
    assert.equal((await api(d.url, 'GET', '/api/v1/pools', undefined, bearer(t2))).status, 200);
    const out = await api(d.url, 'POST', '/api/v1/auth/logout', undefined, bearer(t2));
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie')!, /gslb_session=; .*Max-Age=0/);
    assert.equal((await api(d.url, 'GET', '/api/v1/pools', undefined, bearer(t2))).status, 401);
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/logout', undefined, bearer(t2))).status, 401);

    // users: create, duplicate, PUT, self-delete refused, delete
    const admin = (await api(d.url, 'POST', '/api/v1/auth/login', { email: 'admin@example.test', password: 'first-admin-pw' })).body;
    secrets.add(admin.token);
    const A = bearer(admin.token);
    const op = await api(d.url, 'POST', '/api/v1/users', { email: 'op@example.test', displayName: 'Op', password: 'operator-pw-1', role: 'operator' }, A);
    assert.equal(op.status, 201);
    assert.equal((await api(d.url, 'POST', '/api/v1/users', { email: 'OP@example.test', password: 'operator-pw-1', role: 'viewer' }, A)).status, 409);
    assert.equal((await api(d.url, 'POST', '/api/v1/users', { email: 'x@example.test', password: 'short', role: 'viewer' }, A)).status, 400);
    assert.equal((await api(d.url, 'POST', '/api/v1/users', { email: 'x@example.test', password: 'long-enough-1', role: 'root' }, A)).status, 400);
    // users are rows now: no generic read (users, snapshot document, dashboard, pools) shows a hash
    for (const path of ['/api/v1/users', `/api/v1/users/${op.body.userId}`, '/api/v1/snapshot', '/api/v1/dashboard/stats', '/api/v1/pools', '/api/v1/services', '/api/v1/auth/me']) {
      const r = await api(d.url, 'GET', path, undefined, path === '/api/v1/auth/me' ? A : bearer(SYS));
      assert.equal(r.status, 200, path);
      assert.ok(!/\$2[aby]\$|passwordHash|totpSecret|totpPending|keyHash/.test(JSON.stringify(r.body)), `${path} shows a secret field`);
    }
    const opTok = (await api(d.url, 'POST', '/api/v1/auth/login', { email: 'op@example.test', password: 'operator-pw-1' })).body.token as string;
    secrets.add(opTok);
    assert.equal((await api(d.url, 'POST', '/api/v1/users', { email: 'y@example.test', password: 'long-enough-1', role: 'viewer' }, bearer(opTok))).status, 403);
    const put = await api(d.url, 'PUT', `/api/v1/users/${op.body.userId}`, { role: 'viewer', password: 'new-op-pw-12' }, A);
    assert.equal(put.status, 200);
    assert.equal(put.body.role, 'viewer');
    // a password change by an admin signs the user out everywhere
    assert.equal((await api(d.url, 'GET', '/api/v1/auth/me', undefined, bearer(opTok))).status, 401);
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/login', { email: 'op@example.test', password: 'new-op-pw-12' })).status, 200);
    const self = await api(d.url, 'DELETE', `/api/v1/users/${admin.userId}`, undefined, A);
    assert.equal(self.status, 403);
    assert.deepEqual(self.body, { error: 'you cannot delete your own account' });
    assert.equal((await api(d.url, 'DELETE', `/api/v1/users/${op.body.userId}`, undefined, A)).status, 204);
    assert.equal((await api(d.url, 'GET', `/api/v1/users/${op.body.userId}`, undefined, A)).status, 404);

    // login attempt limit: 5 failures per account and source, then 429 even with the right password
    for (let i = 0; i < 5; i++) assert.equal((await api(d.url, 'POST', '/api/v1/auth/login', { email: 'victim@example.test', password: `guess-${i}-xx` })).status, 401);
    await api(d.url, 'POST', '/api/v1/users', { email: 'victim@example.test', password: 'victim-pw-12', role: 'viewer' }, A);
    const limited = await api(d.url, 'POST', '/api/v1/auth/login', { email: 'victim@example.test', password: 'victim-pw-12' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.match(limited.body.error, /too many failed sign-in attempts/);

    // password reset: 503 without mail; with mail, a single-use token by e-mail
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/password-reset', { email: 'admin@example.test' })).status, 503);
    const sent: MailMessage[] = [];
    d.core.mail = { configured: () => true, send: async (m) => { sent.push(m); return { accepted: m.to, response: '250 ok' }; } };
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/password-reset', { email: 'nobody@example.test' })).status, 202);
    const req = await api(d.url, 'POST', '/api/v1/auth/password-reset', { email: 'admin@example.test' });
    assert.equal(req.status, 202);
    await waitUntil('the reset mail', () => sent.length > 0);
    assert.equal(sent.length, 1, 'one mail, only for the existing account');
    assert.deepEqual(sent[0]!.to, ['Admin@Example.test']);
    const resetToken = decodeURIComponent(/reset=([^\s]+)/.exec(sent[0]!.text)![1]!);
    secrets.add(resetToken);
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/password-reset/confirm', { token: resetToken, password: 'reset-pw-123' })).status, 204);
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/password-reset/confirm', { token: resetToken, password: 'reset-pw-456' })).status, 400, 'single use');
    assert.equal((await api(d.url, 'GET', '/api/v1/auth/me', undefined, A)).status, 401, 'reset revokes sessions');
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/login', { email: 'admin@example.test', password: 'reset-pw-123' })).status, 200);

    // audit: every POST/PUT/DELETE with the §6 fields; actor = last 4 of the token; no GET
    const entries = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const del = entries.find((e) => e.method === 'DELETE' && e.status === 204)!;
    assert.deepEqual(Object.keys(del).filter((k) => k !== 'time').sort(), ['actor', 'duration_ms', 'method', 'path', 'remote', 'status']);
    assert.equal(del.actor, admin.token.slice(-4));
    assert.equal(del.remote, '127.0.0.1');
    assert.ok(entries.some((e) => e.path === '/api/v1/auth/login' && e.actor === 'anon' && e.status === 401));
    assert.ok(entries.some((e) => e.path === '/api/v1/auth/logout' && e.actor === t2.slice(-4) && e.status === 204));
    assert.ok(entries.some((e) => e.path === '/api/v1/auth/logout' && e.actor === t2.slice(-4) && e.status === 401), 'a refused token is still named');
    assert.ok(!entries.some((e) => e.method === 'GET'));
    const auditText = readFileSync(audit, 'utf8');
    assertNoSecrets(auditText, [...secrets].filter((s) => s.length > 8));
    assertNoSecrets(d.logs.text(), secrets);
  } finally {
    await d.stop();
  }
});

test('dev mode (no GSLB_API_KEY): every request is a system admin', async () => {
  const d = await startTestDaemon({ auth: { bcryptCost: 10 } } as never, {});
  try {
    const me = await api(d.url, 'GET', '/api/v1/auth/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.kind, 'dev');
    assert.equal((await api(d.url, 'GET', '/api/v1/users')).status, 200);
  } finally {
    await d.stop();
  }
});
