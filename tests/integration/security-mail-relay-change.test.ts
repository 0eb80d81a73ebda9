import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { RecordingRelay } from './security-mail-recorder.js';

// Credentials never follow a redirected relay (docs/alerts.md "Mail settings"): a PUT that changes
// host, port or username drops the stored password unless it sends one again; the same relay with
// the password omitted keeps it (gslb-config-auth.md §2).
const OLD = { user: 'relay-user', pass: 'stored-pass-C3' };
let home: RecordingRelay;
let otherPort: RecordingRelay;
let otherHost: RecordingRelay;
let d: TestDaemon;

before(async () => {
  home = await new RecordingRelay({ accept: OLD }).start();
  otherPort = await new RecordingRelay({ accept: { user: 'relay-user', pass: 'resent-pass-D4' } }).start();
  otherHost = await new RecordingRelay({ host: '127.0.0.2' }).start();
  d = await startTestDaemon({} as never, { GSLB_SECRET_KEY: '7d'.repeat(32) }); // dev mode: the server-wide row
});
after(async () => {
  await d?.stop();
  for (const r of [home, otherPort, otherHost]) await r.stop();
});

const rows: { name: string; change: () => Record<string, unknown>; to: () => RecordingRelay; hasPassword: boolean; sent?: string }[] = [
  { name: 'same host, port and username, password omitted: kept', change: () => ({}), to: () => home, hasPassword: true, sent: OLD.pass },
  { name: 'other host: dropped', change: () => ({ host: otherHost.host, port: otherHost.port }), to: () => otherHost, hasPassword: false },
  { name: 'other port on the same host: dropped', change: () => ({ port: otherPort.port }), to: () => otherPort, hasPassword: false },
  { name: 'other username: dropped', change: () => ({ username: 'someone-else' }), to: () => home, hasPassword: false },
  { name: 'other port with the password sent again: stored', change: () => ({ port: otherPort.port, password: 'resent-pass-D4' }), to: () => otherPort, hasPassword: true, sent: 'resent-pass-D4' },
];

test('changing host, port or username drops the stored password; the same relay keeps it', async () => {
  for (const row of rows) {
    // start each row from the stored relay with its password
    const base = { host: '127.0.0.1', port: home.port, from: 'gslbd@example.test', username: OLD.user, startTls: false };
    const set = await api(d.url, 'PUT', '/api/v1/settings/smtp', { ...base, password: OLD.pass });
    assert.equal(set.body.hasPassword, true, row.name);
    const relay = row.to();
    const seen = relay.auths.length;
    const put = await api(d.url, 'PUT', '/api/v1/settings/smtp', { ...base, ...row.change() });
    assert.equal(put.status, 200, `${row.name}: ${JSON.stringify(put.body)}`);
    assert.equal(put.body.hasPassword, row.hasPassword, row.name);
    assert.equal((await api(d.url, 'GET', '/api/v1/settings/smtp')).body.hasPassword, row.hasPassword, `${row.name}: GET agrees`);

    await api(d.url, 'POST', '/api/v1/settings/smtp/test', { to: 'ops@example.test' });
    const offered = relay.auths.slice(seen).map((a) => a.pass);
    if (row.sent) assert.deepEqual(offered, [row.sent], `${row.name}: logged in with ${row.sent}`);
    else assert.ok(!offered.includes(OLD.pass), `${row.name}: the old password never reached the new relay (offered: ${offered.length})`);
  }
  for (const r of [otherPort, otherHost]) assert.ok(!r.passwords().includes(OLD.pass));
  assert.ok(d.logs.lines.some((l) => l.msg === 'mail settings stored' && l.credentials === 'dropped'), 'a dropped password is logged (without the password)');
  assert.ok(!d.logs.text().includes(OLD.pass));
});
