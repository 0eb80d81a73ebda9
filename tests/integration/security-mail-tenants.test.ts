import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { getRow } from '../../core/snapshot/snapshot.js';
import type { MailSettingsRow } from '../../runtime/mail/settings-store.js';
import { RecordingRelay } from './security-mail-recorder.js';

// docs/alerts.md "Mail settings": /settings/smtp acts on the caller's own settings. Tenant acme
// must not be able to read, change or borrow the server-wide relay and its credentials.
const SYS = 'system-key-security-mail-tenants';
const SYS_CREDS = { user: 'relay-user', pass: 'server-wide-pass-A1' };
const ACME_CREDS = { user: 'acme-user', pass: 'acme-own-pass-B2' };
const sys = { authorization: `Bearer ${SYS}` };
let serverRelay: RecordingRelay;
let acmeRelay: RecordingRelay;
let d: TestDaemon;
const H: Record<'opAdmin' | 'acmeAdmin' | 'acmeKey', Record<string, string>> = { opAdmin: {}, acmeAdmin: {}, acmeKey: {} };

const smtp = (path = '') => `/api/v1/settings/smtp${path}`;

before(async () => {
  serverRelay = await new RecordingRelay({ accept: SYS_CREDS }).start();
  acmeRelay = await new RecordingRelay({ accept: ACME_CREDS }).start();
  d = await startTestDaemon({ auth: { bcryptCost: 10 }, api: { publicURL: 'https://gslb.example.test' } } as never,
    { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: '5e'.repeat(32) });
  const ok = async (method: string, path: string, body: unknown, h: Record<string, string> = sys) => {
    const r = await api(d.url, method, path, body, h);
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await ok('POST', '/api/v1/tenants', { id: 'acme', name: 'Acme' });
  // `system` names the server-wide rows (mail:system): no tenant may take that id
  assert.equal((await api(d.url, 'POST', '/api/v1/tenants', { id: 'system' }, sys)).status, 409);
  await ok('POST', '/api/v1/users', { email: 'admin@default.test', password: 'op-admin-pass-1', role: 'tenant_admin' });
  await ok('POST', '/api/v1/users', { email: 'alice@default.test', password: 'alice-pass-12', role: 'viewer' });
  await ok('POST', '/api/v1/users', { email: 'bob@acme.test', password: 'bob-admin-pass-1', role: 'tenant_admin', tenantId: 'acme' });
  const login = async (email: string, password: string) => ({ authorization: `Bearer ${(await ok('POST', '/api/v1/auth/login', { email, password }, {})).token}` });
  H.opAdmin = await login('admin@default.test', 'op-admin-pass-1');
  H.acmeAdmin = await login('bob@acme.test', 'bob-admin-pass-1');
  H.acmeKey = { authorization: `Bearer ${(await ok('POST', '/api/v1/tenants/acme/apikeys', { name: 'legacy' })).key}` };
  // the server-wide relay, set by the operator tenant's admin
  await ok('PUT', smtp(), { host: '127.0.0.1', port: serverRelay.port, from: 'gslbd@example.test', to: ['ops@default.test'], username: SYS_CREDS.user, password: SYS_CREDS.pass, startTls: false }, H.opAdmin);
});
after(async () => {
  await d?.stop();
  await serverRelay.stop();
  await acmeRelay.stop();
});

test('the system key and the operator tenant\'s admin act on one server-wide row', async () => {
  for (const h of [sys, H.opAdmin]) {
    const v = (await api(d.url, 'GET', smtp(), undefined, h)).body;
    assert.deepEqual([v.source, v.port, v.username, v.hasPassword], ['database', serverRelay.port, SYS_CREDS.user, true]);
  }
});

test('another tenant starts with nothing: no view of the server-wide settings, no test send through them', async () => {
  for (const h of [H.acmeAdmin, H.acmeKey]) {
    const v = await api(d.url, 'GET', smtp(), undefined, h);
    assert.equal(v.status, 200);
    assert.deepEqual(v.body, { host: '', port: 587, from: '', to: [], username: '', hasPassword: false, tls: false, startTls: true, enabled: false, source: 'none' });
  }
  const t = await api(d.url, 'POST', smtp('/test'), { to: 'bob@acme.test' }, H.acmeAdmin);
  assert.equal(t.status, 400);
  assert.equal(serverRelay.messages.length, 0, 'nothing went through the server-wide relay');
});

test('tenant B points "its" relay at its own server: A\'s settings stay, B\'s test send never carries A\'s credentials', async () => {
  // the attack: same username as the server-wide row, password omitted, host and port of B's server
  const put = await api(d.url, 'PUT', smtp(), { host: '127.0.0.1', port: acmeRelay.port, from: 'gslbd@acme.test', to: ['noc@acme.test'], username: SYS_CREDS.user, startTls: false }, H.acmeAdmin);
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.deepEqual([put.body.source, put.body.hasPassword], ['database', false]);
  const server = (await api(d.url, 'GET', smtp(), undefined, sys)).body;
  assert.deepEqual([server.port, server.username, server.hasPassword, server.to], [serverRelay.port, SYS_CREDS.user, true, ['ops@default.test']], 'the server-wide row is unchanged');

  await api(d.url, 'POST', smtp('/test'), { to: 'bob@acme.test' }, H.acmeAdmin);
  assert.ok(!acmeRelay.passwords().includes(SYS_CREDS.pass), 'B\'s server never saw A\'s password');
  assert.equal(serverRelay.messages.length, 0);

  // with its own credentials B's test send works, through B's server only
  const own = await api(d.url, 'PUT', smtp(), { host: '127.0.0.1', port: acmeRelay.port, from: 'gslbd@acme.test', to: ['noc@acme.test'], username: ACME_CREDS.user, password: ACME_CREDS.pass, startTls: false }, H.acmeKey);
  assert.equal(own.body.hasPassword, true);
  const ok = await api(d.url, 'POST', smtp('/test'), { to: 'bob@acme.test' }, H.acmeAdmin);
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.server, `127.0.0.1:${acmeRelay.port}`);
  const [m] = await acmeRelay.waitFor(1);
  assert.equal(m!.user, ACME_CREDS.user);
  assert.deepEqual(acmeRelay.auths.filter((a) => a.pass !== '').map((a) => a.user), [ACME_CREDS.user], 'only B\'s own credentials reached B\'s server');
  assert.ok(!acmeRelay.passwords().includes(SYS_CREDS.pass));
  assert.equal(serverRelay.messages.length, 0);
});

test('a password reset for a user of tenant A goes to the server-wide relay, never to B\'s', async () => {
  const before = acmeRelay.messages.length;
  for (const email of ['alice@default.test', 'bob@acme.test']) {
    const r = await api(d.url, 'POST', '/api/v1/auth/password-reset', { email });
    assert.equal(r.status, 202);
  }
  const got = await serverRelay.waitFor(2);
  assert.deepEqual(got.map((m) => m.rcptTo).sort(), [['alice@default.test'], ['bob@acme.test']]);
  for (const m of got) {
    assert.equal(m.user, SYS_CREDS.user);
    assert.match(m.text, /https:\/\/gslb\.example\.test\/ui\/login\?reset=\S+/);
  }
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(acmeRelay.messages.length, before, 'B\'s relay received no reset mail');
});

test('settings rows are plan rows: in the snapshot, with a recorded revision, sealed', async () => {
  const snap = d.core.holder.current;
  const server = getRow<MailSettingsRow>(snap, 'mailsettings', 'mail:system')!;
  const acme = getRow<MailSettingsRow>(snap, 'mailsettings', 'mail:acme')!;
  assert.deepEqual([server.tenantId, server.origin, acme.tenantId, acme.origin], ['default', 'api', 'acme', 'api']);
  for (const row of [server, acme]) {
    assert.match(String(row.password), /^v2:/, 'sealed with GSLB_SECRET_KEY');
    const rev = d.core.db.prepare('SELECT origin FROM revisions WHERE revision = ?').get(row.revision) as { origin: string } | undefined;
    assert.equal(rev?.origin, 'api', `revision ${row.revision} is recorded`);
  }
  const stored = d.core.db.prepare("SELECT data FROM resources WHERE kind = 'mailsettings'").all() as { data: string }[];
  assert.equal(stored.length, 2);
  for (const s of stored) for (const p of [SYS_CREDS.pass, ACME_CREDS.pass]) assert.ok(!s.data.includes(p), 'no clear password at rest');
});

test('DELETE by tenant B removes only B\'s row', async () => {
  assert.equal((await api(d.url, 'DELETE', smtp(), undefined, H.acmeAdmin)).status, 204);
  assert.equal((await api(d.url, 'GET', smtp(), undefined, H.acmeKey)).body.source, 'none');
  const server = (await api(d.url, 'GET', smtp(), undefined, sys)).body;
  assert.deepEqual([server.source, server.port, server.hasPassword], ['database', serverRelay.port, true]);
  assert.equal(d.core.mail.configured(), true, 'password reset still has its relay');
  const logs = d.logs.text();
  for (const p of [SYS_CREDS.pass, ACME_CREDS.pass]) assert.ok(!logs.includes(p), 'no password in the log');
});
