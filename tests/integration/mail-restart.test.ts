import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTestDaemon } from '../helpers/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'gslbd-mail-restart-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = { smtp: [{ host: 'file-relay.example.test', port: 25, from: 'file@example.test', to: ['f@example.test'], startTls: false }] };

test('stored settings survive a restart; a changed key is reported; after DELETE the file applies at the next start', async () => {
  const db = { path: join(dir, 'gslbd.db') };
  const a = await startTestDaemon({ database: db, alerts: file } as never, { GSLB_SECRET_KEY: '1a'.repeat(32) });
  try {
    const put = await api(a.url, 'PUT', '/api/v1/settings/smtp', { host: '127.0.0.1', port: 1, from: 'g@example.test', username: 'u', password: 'stored-secret-1' });
    assert.equal(put.status, 200);
  } finally { await a.stop(); }

  const b = await startTestDaemon({ database: db, alerts: file } as never, { GSLB_SECRET_KEY: '2b'.repeat(32) });
  try {
    const get = await api(b.url, 'GET', '/api/v1/settings/smtp');
    assert.equal(get.body.source, 'database', 'stored settings win over the file after a restart');
    assert.equal(get.body.hasPassword, true);
    const t = await api(b.url, 'POST', '/api/v1/settings/smtp/test', { to: 'x@example.test' });
    assert.equal(t.status, 502);
    assert.match(t.body.error, /cannot be decrypted/);
    assert.ok(b.logs.lines.some((l) => l.msg === 'stored mail password unreadable'));
    assert.equal((await api(b.url, 'DELETE', '/api/v1/settings/smtp')).status, 204);
    assert.equal((await api(b.url, 'GET', '/api/v1/settings/smtp')).body.source, 'none', 'right after DELETE nothing applies');
  } finally { await b.stop(); }

  const c = await startTestDaemon({ database: db, alerts: file } as never, {});
  try {
    const get = await api(c.url, 'GET', '/api/v1/settings/smtp');
    assert.equal(get.body.source, 'file');
    assert.equal(get.body.host, 'file-relay.example.test');
  } finally { await c.stop(); }
});
