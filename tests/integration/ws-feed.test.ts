import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { startTestDaemon, api } from '../helpers/daemon.js';
import { WsTokens } from '../../runtime/ws/token.js';

type Msg = { type: string; payload: any };

/** Opens the feed and collects messages; resolves once open. */
function connect(url: string): Promise<{ ws: WebSocket; msgs: Msg[]; next: (pred: (m: Msg) => boolean, ms?: number) => Promise<Msg> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const msgs: Msg[] = [];
    const waiters: { pred: (m: Msg) => boolean; res: (m: Msg) => void }[] = [];
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as Msg;
      msgs.push(m);
      for (const w of [...waiters]) if (w.pred(m)) { waiters.splice(waiters.indexOf(w), 1); w.res(m); }
    });
    const next = (pred: (m: Msg) => boolean, ms = 3000) => {
      const found = msgs.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise<Msg>((res, rej) => {
        const timer = setTimeout(() => rej(new Error(`no matching message within ${ms} ms; got ${msgs.map((m) => m.type).join(',')}`)), ms);
        waiters.push({ pred, res: (m) => { clearTimeout(timer); res(m); } });
      });
    };
    ws.once('open', () => resolve({ ws, msgs, next }));
    ws.once('error', reject);
  });
}

/** The HTTP status a refused upgrade answered with. */
function refusedStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('unexpected-response', (_req, res) => { resolve(res.statusCode ?? 0); ws.terminate(); });
    ws.once('open', () => { ws.close(); reject(new Error('upgrade was accepted')); });
    ws.once('error', () => { /* reported through unexpected-response */ });
  });
}

test('ws: token then feed with member snapshot, stats, CRUD and health_update; client count tracked', async (t) => {
  const listener: Server = await new Promise((r) => { const s = createServer((c) => c.destroy()); s.listen(0, '127.0.0.61', () => r(s)); });
  const port = (listener.address() as AddressInfo).port;
  const d = await startTestDaemon();
  t.after(async () => { await d.stop(); if (listener.listening) await new Promise((r) => listener.close(r)); });
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'p' })).body;
  const m1 = (await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '127.0.0.61', port: 80 })).body;

  const tok = await api(d.url, 'GET', '/api/v1/ws/token');
  assert.equal(tok.status, 200);
  assert.equal(typeof tok.body.token, 'string');
  assert.ok(Number.isInteger(tok.body.expiresAt) && tok.body.expiresAt > Date.now() && tok.body.expiresAt <= Date.now() + 61_000);
  const wsUrl = `${d.url.replace('http', 'ws')}/api/v1/ws?token=${encodeURIComponent(tok.body.token)}`;
  const c = await connect(wsUrl);
  t.after(() => c.ws.terminate());

  const snap = await c.next((m) => m.type === 'member_update' && m.payload.action === 'snapshot');
  assert.deepEqual([snap.payload.poolId, snap.payload.member.id, snap.payload.member.ipAddress], [pool.id, m1.id, '127.0.0.61']);
  const stats = await c.next((m) => m.type === 'stats_update');
  assert.equal(stats.payload.totalMembers, 1);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(d.core.gauges.webSocketClients(), 1);
  const dash = await api(d.url, 'GET', '/api/v1/dashboard/stats');
  assert.equal(dash.body.webSocketClients, 1);

  const svc = await api(d.url, 'POST', '/api/v1/services', { name: 's', domain: 'ws.example.test.', poolId: pool.id });
  const su = await c.next((m) => m.type === 'service_update');
  assert.deepEqual([su.payload.action, su.payload.service.id], ['created', svc.body.id]);
  await api(d.url, 'PUT', `/api/v1/pools/${pool.id}`, { name: 'p2' });
  const pu = await c.next((m) => m.type === 'pool_update');
  assert.deepEqual([pu.payload.action, pu.payload.pool.name], ['updated', 'p2']);
  const m2 = (await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '127.0.0.62', port: 80 })).body;
  const mc = await c.next((m) => m.type === 'member_update' && m.payload.action === 'created');
  assert.deepEqual([mc.payload.poolId, mc.payload.member.id], [pool.id, m2.id]);
  await api(d.url, 'DELETE', `/api/v1/members/${m2.id}`);
  const md = await c.next((m) => m.type === 'member_update' && m.payload.action === 'deleted');
  assert.equal(md.payload.member.id, m2.id);

  await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'tcp', port, intervalMs: 100, timeoutMs: 80 });
  await new Promise<void>((r) => listener.close(() => r()));
  const hu = await c.next((m) => m.type === 'health_update');
  assert.deepEqual(Object.keys(hu.payload).sort(), ['healthy', 'ipAddress', 'node', 'poolId', 'rttMs', 'score', 'timestamp']);
  assert.deepEqual([hu.payload.poolId, hu.payload.ipAddress, hu.payload.healthy, hu.payload.score, hu.payload.node], [pool.id, '127.0.0.61', false, 0, 'test-node']);
  assert.ok(Number.isInteger(hu.payload.timestamp) && Number.isInteger(hu.payload.rttMs));

  (d.core.ports.ws as { publishStats: () => void }).publishStats();
  const s2 = await c.next((m) => m.type === 'stats_update' && m.payload.unhealthyMembers === 1);
  assert.equal(s2.payload.webSocketClients, 1);

  c.ws.close();
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(d.core.gauges.webSocketClients(), 0);
});

test('ws: missing, forged and expired tokens are refused with 401 before the upgrade', async (t) => {
  const d = await startTestDaemon();
  t.after(() => d.stop());
  const base = `${d.url.replace('http', 'ws')}/api/v1/ws`;
  assert.equal(await refusedStatus(base), 401);
  assert.equal(await refusedStatus(`${base}?token=not-a-jwt`), 401);
  const other = await new WsTokens().issue({ tenantId: null, actor: 'x' }); // another process's key
  assert.equal(await refusedStatus(`${base}?token=${other.token}`), 401);
  // a token of this daemon's key issued 2 minutes ago has expired
  const rt = d.core.ports.ws as { tokens: WsTokens };
  const key = (rt.tokens as unknown as { key: Uint8Array }).key;
  const old = await new WsTokens(() => Date.now() - 120_000, key).issue({ tenantId: null, actor: 'x' });
  assert.ok(old.expiresAt < Date.now());
  assert.equal(await refusedStatus(`${base}?token=${old.token}`), 401);
  const fresh = await new WsTokens(Date.now, key).issue({ tenantId: null, actor: 'x' });
  const ok = await connect(`${base}?token=${fresh.token}`);
  ok.ws.terminate();
});

test('ws: /ws/token needs credentials outside dev mode', async (t) => {
  const d = await startTestDaemon({}, { GSLB_API_KEY: 'k'.repeat(40) });
  t.after(() => d.stop());
  assert.equal((await api(d.url, 'GET', '/api/v1/ws/token')).status, 401);
  const ok = await api(d.url, 'GET', '/api/v1/ws/token', undefined, { authorization: `Bearer ${'k'.repeat(40)}` });
  assert.equal(ok.status, 200);
});
