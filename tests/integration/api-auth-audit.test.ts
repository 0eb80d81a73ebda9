import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon, api } from '../helpers/daemon.js';

const KEY = 'k'.repeat(60) + 'ZX9q';

test('with GSLB_API_KEY set: 401 without it, full access with it; /health stays open', async () => {
  const d = await startTestDaemon({}, { GSLB_API_KEY: KEY });
  try {
    const anon = await api(d.url, 'GET', '/api/v1/pools');
    assert.equal(anon.status, 401);
    assert.equal(typeof anon.body.error, 'string');
    assert.equal((await api(d.url, 'GET', '/api/v1/pools', undefined, { authorization: 'Bearer wrong' })).status, 401);
    assert.equal((await api(d.url, 'POST', '/api/v1/pools', { name: 'x' }, { authorization: 'Bearer wrong' })).status, 401);
    assert.equal((await api(d.url, 'GET', '/api/v1/pools', undefined, { authorization: `Bearer ${KEY}` })).status, 200);
    assert.equal((await api(d.url, 'POST', '/api/v1/pools', { name: 'x' }, { authorization: `Bearer ${KEY}` })).status, 201);
    assert.equal((await api(d.url, 'GET', '/api/v1/health')).status, 200);
    assert.ok(!d.logs.text().includes(KEY), 'the system key never appears in a log line');
  } finally { await d.stop(); }
});

test('dev mode: without GSLB_API_KEY every request is a system admin, and a warning says so', async () => {
  const d = await startTestDaemon();
  try {
    assert.equal((await api(d.url, 'POST', '/api/v1/pools', { name: 'dev' })).status, 201);
    assert.ok(d.logs.lines.some((l) => l.level === 40 && /dev mode/.test(String(l.msg))));
  } finally { await d.stop(); }
});

test('GSLB_AUDIT_LOG gets one JSON line per POST, PUT and DELETE; never GET or /health', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-audit-'));
  const file = join(dir, 'audit.log');
  const d = await startTestDaemon({}, { GSLB_API_KEY: KEY, GSLB_AUDIT_LOG: file });
  try {
    const auth = { authorization: `Bearer ${KEY}` };
    const p = await api(d.url, 'POST', '/api/v1/pools', { name: 'a' }, auth);
    await api(d.url, 'PUT', `/api/v1/pools/${p.body.id}`, { name: 'b' }, auth);
    await api(d.url, 'GET', '/api/v1/pools', undefined, auth);
    await api(d.url, 'GET', '/api/v1/health');
    await api(d.url, 'DELETE', `/api/v1/pools/${p.body.id}`, undefined, auth);
    await api(d.url, 'POST', '/api/v1/pools', { name: 'anon' });
    await new Promise((r) => setTimeout(r, 50));
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.method, l.status]), [['POST', 201], ['PUT', 200], ['DELETE', 204], ['POST', 401]]);
    for (const l of lines) {
      for (const k of ['method', 'path', 'actor', 'remote', 'status', 'duration_ms']) assert.ok(k in l, k);
      assert.equal(typeof l.duration_ms, 'number');
    }
    assert.equal(lines[0].actor, 'ZX9q', 'actor is the last 4 characters of the bearer token');
    assert.equal(lines[3].actor, 'anon');
    assert.equal(lines[0].path, '/api/v1/pools');
    assert.equal(lines[0].remote, '127.0.0.1');
    assert.ok(!readFileSync(file, 'utf8').includes(KEY));
  } finally {
    await d.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without GSLB_AUDIT_LOG audit entries go to the main log marked audit: true', async () => {
  const d = await startTestDaemon();
  try {
    await api(d.url, 'POST', '/api/v1/pools', { name: 'x' });
    await api(d.url, 'GET', '/api/v1/pools');
    await new Promise((r) => setTimeout(r, 20));
    const audits = d.logs.lines.filter((l) => l.audit === true);
    assert.equal(audits.length, 1);
    assert.equal(audits[0]!.method, 'POST');
  } finally { await d.stop(); }
});

test('api.trustedProxies: X-Forwarded-For is used only from a trusted network', async () => {
  const d = await startTestDaemon({ api: { trustedProxies: ['127.0.0.0/8'] } });
  try {
    await api(d.url, 'POST', '/api/v1/pools', { name: 'x' }, { 'x-forwarded-for': '203.0.113.7' });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(d.logs.lines.find((l) => l.audit === true)?.remote, '203.0.113.7');
  } finally { await d.stop(); }
  const u = await startTestDaemon({ api: { trustedProxies: ['10.0.0.0/8'] } });
  try {
    await api(u.url, 'POST', '/api/v1/pools', { name: 'x' }, { 'x-forwarded-for': '203.0.113.7' });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(u.logs.lines.find((l) => l.audit === true)?.remote, '127.0.0.1');
  } finally { await u.stop(); }
});
