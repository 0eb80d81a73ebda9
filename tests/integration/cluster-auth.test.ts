/** NATS credentials from `state.nats.auth`; a node whose bus refuses it keeps serving alone. */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startNats, stopAllNats, waitFor } from '../helpers/nats.js';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import type { ClusterState } from '../../runtime/cluster/cluster-state.js';

const daemons: TestDaemon[] = [];
after(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  await stopAllNats();
});

test('user/password auth: right credentials connect, wrong ones leave the node serving from local state', async () => {
  const nats = await startNats('auth', ['--user', 'gslb', '--pass', 's3cret']);
  const ok = await startTestDaemon({ node: { id: 'ok' }, state: { heartbeatInterval: '300ms', nats: { servers: [nats.url], auth: { user: 'gslb', password: 's3cret' } } } });
  daemons.push(ok);
  const bad = await startTestDaemon({ node: { id: 'bad' }, state: { heartbeatInterval: '300ms', nats: { servers: [nats.url], auth: { user: 'gslb', password: 'wrong' } } } });
  daemons.push(bad);
  const state = (d: TestDaemon) => d.core.ports.cluster as ClusterState;
  await waitFor('ok connects', () => state(ok).connected(), 10_000);
  // the refused node is up and answers its API; its sessions fall back to node-local memory
  assert.equal(state(bad).connected(), false);
  assert.equal((await api(bad.url, 'GET', '/api/v1/pools')).status, 200);
  await bad.core.sessions.put('h', { userId: 'u', tenantId: 'default', role: 'viewer', createdAt: 0, expiresAt: Date.now() + 60_000 });
  assert.equal((await bad.core.sessions.get('h'))?.userId, 'u');
  assert.equal(await ok.core.sessions.get('h'), undefined, 'not shared without the bus');
});
