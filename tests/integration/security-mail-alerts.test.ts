import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import type { AlertsInfo } from '../../runtime/alerts/part.js';
import { RecordingRelay } from './security-mail-recorder.js';

// Health-alert mail goes through the settings of the pool's own tenant (docs/alerts.md "Mail"):
// the operator tenant's pools through the server-wide relay, any other tenant's through its own
// row only, and a tenant without a row gets no mail alert at all.
const SYS = 'system-key-security-mail-alerts';
const sys = { authorization: `Bearer ${SYS}` };
const relays: Record<'server' | 'acme' | 'beta', RecordingRelay> = {} as never;
const pools: Record<'ops' | 'acme' | 'beta' | 'gamma', string> = {} as never;
let d: TestDaemon;

before(async () => {
  for (const k of ['server', 'acme', 'beta'] as const) relays[k] = await new RecordingRelay().start();
  d = await startTestDaemon({ auth: { bcryptCost: 10 }, tenancy: { operatorTenant: 'ops' } } as never, { GSLB_API_KEY: SYS });
  const ok = async (method: string, path: string, body: unknown, h: Record<string, string> = sys) => {
    const r = await api(d.url, method, path, body, h);
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const relayOf = { ops: relays.server, acme: relays.acme, beta: relays.beta } as Record<string, RecordingRelay>;
  for (const t of ['ops', 'acme', 'beta', 'gamma']) {
    await ok('POST', '/api/v1/tenants', { id: t });
    await ok('POST', '/api/v1/users', { email: `admin@${t}.test`, password: `${t}-admin-pass`, role: 'tenant_admin', tenantId: t });
    const h = { authorization: `Bearer ${(await ok('POST', '/api/v1/auth/login', { email: `admin@${t}.test`, password: `${t}-admin-pass` }, {})).token}` };
    pools[t as keyof typeof pools] = (await ok('POST', '/api/v1/pools', { name: `pool-${t}` }, h)).id;
    // ops is the operator tenant: its admin sets the server-wide relay; gamma sets nothing
    const relay = relayOf[t];
    if (relay) await ok('PUT', '/api/v1/settings/smtp', { host: '127.0.0.1', port: relay.port, from: `gslbd@${t}.test`, to: [`noc@${t}.test`], startTls: false }, h);
  }
});
after(async () => {
  await d?.stop();
  for (const r of Object.values(relays)) await r.stop();
});

test('a health flip mails only the pool\'s own tenant, through its own relay', async () => {
  const t0 = Date.now();
  // one burst: the mail target may batch these into one delivery, which must still split by owner
  for (const [i, t] of (['ops', 'acme', 'beta', 'gamma'] as const).entries()) {
    d.core.bus.emit('health_transition', { poolId: pools[t], ipAddress: `192.0.2.${10 + i}`, healthy: false, score: 0, timestamp: t0, rttMs: 0, node: 'test-node' });
  }
  await Promise.all([relays.server.waitFor(1), relays.acme.waitFor(1), relays.beta.waitFor(1)]);
  await (d.core.ports.alerts as AlertsInfo).dispatcher.idle();
  const want: [RecordingRelay, string, string][] = [[relays.server, 'ops', 'noc@ops.test'], [relays.acme, 'acme', 'noc@acme.test'], [relays.beta, 'beta', 'noc@beta.test']];
  for (const [relay, tenant, rcpt] of want) {
    assert.equal(relay.messages.length, 1, `${tenant}: one message`);
    const m = relay.messages[0]!;
    assert.deepEqual(m.rcptTo, [rcpt]);
    assert.equal(m.mailFrom, `gslbd@${tenant}.test`);
    const body = `${m.subject}\n${m.text}`;
    for (const [other, id] of Object.entries(pools)) assert.equal(body.includes(id), other === tenant, `${tenant}'s mail ${other === tenant ? 'names' : 'does not name'} pool ${other}`);
  }
  // gamma has no settings: its flip is mailed nowhere (not even server-wide)
  for (const relay of Object.values(relays)) assert.ok(!relay.messages.some((m) => m.text.includes(pools.gamma)));
});

test('a GitOps rejection is a system alert: server-wide relay only', async () => {
  const before = { acme: relays.acme.messages.length, beta: relays.beta.messages.length, server: relays.server.messages.length };
  d.core.bus.emit('gitops_rejected', { revision: 'badc0ffee'.padEnd(40, '0'), reason: 'SignatureInvalid', message: 'not signed' });
  await relays.server.waitFor(before.server + 1);
  await (d.core.ports.alerts as AlertsInfo).dispatcher.idle();
  assert.match(relays.server.messages.at(-1)!.subject, /GitOps revision badc0ffee/);
  assert.equal(relays.acme.messages.length, before.acme);
  assert.equal(relays.beta.messages.length, before.beta);
});

test('a tenant that deletes its settings stops getting mail; other tenants are unaffected', async () => {
  const h = { authorization: `Bearer ${(await api(d.url, 'POST', '/api/v1/auth/login', { email: 'admin@beta.test', password: 'beta-admin-pass' })).body.token}` };
  assert.equal((await api(d.url, 'DELETE', '/api/v1/settings/smtp', undefined, h)).status, 204);
  const before = { acme: relays.acme.messages.length, beta: relays.beta.messages.length, server: relays.server.messages.length };
  for (const t of ['acme', 'beta'] as const) d.core.bus.emit('health_transition', { poolId: pools[t], ipAddress: '192.0.2.99', healthy: true, score: 1, timestamp: Date.now(), rttMs: 1, node: 'test-node' });
  await relays.acme.waitFor(before.acme + 1);
  await (d.core.ports.alerts as AlertsInfo).dispatcher.idle();
  assert.equal(relays.beta.messages.length, before.beta, 'beta has no relay any more');
  assert.equal(relays.server.messages.length, before.server, 'and does not fall back to the server-wide one');
});
