/**
 * Config messages as the stream delivers them: a revision published twice (outside the duplicate
 * window, so under two message ids) is applied once; a plan that cannot be applied stalls the
 * node at that sequence instead of being skipped.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { startNats, stopAllNats, waitFor } from '../helpers/nats.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { planCreate } from '../../core/plan/delta.js';
import { emptySnapshot, getRow } from '../../core/snapshot/snapshot.js';
import type { ClusterState } from '../../runtime/cluster/cluster-state.js';
import type { ConfigMsg } from '../../runtime/cluster/config-sync.js';
import type { Plan } from '../../core/plan/types.js';

const daemons: TestDaemon[] = [];
after(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  await stopAllNats();
});

test('a revision published twice is applied once; an unappliable plan stalls instead of being skipped', async () => {
  const nats = await startNats();
  const d = await startTestDaemon({ node: { id: 'x' }, cluster: { id: 'cs' }, state: { enableConfigSync: true, heartbeatInterval: '300ms', config: { applyTimeout: '500ms' }, nats: { servers: [nats.url] } } });
  daemons.push(d);
  const st = d.core.ports.cluster as ClusterState;
  await waitFor('connected', () => st.connected(), 10_000);
  const nc = await connect({ servers: nats.url });
  try {
    const js = jetstream(nc);
    await waitFor('stream exists', async () => { try { await js.publish('svc.cfg.cs', new TextEncoder().encode('{}'), { msgID: 'probe' }); return true; } catch { return false; } }, 10_000, 100);
    const send = (plan: Plan, id: string) => js.publish('svc.cfg.cs', new TextEncoder().encode(JSON.stringify({ plan, node: 'elsewhere', at: Date.now() } satisfies ConfigMsg)), { msgID: id });
    const plan = planCreate(emptySnapshot(), { kind: 'pool', id: 'pool-from-stream', name: 'from-stream', origin: 'api', revision: '', tenantId: 'default' } as never, 'api:twice');
    await send(plan, 'first');
    await send(plan, 'second');
    await waitFor('applied', () => getRow(d.core.holder.current, 'pool', 'pool-from-stream') !== undefined);
    const last = (await js.publish('svc.cfg.cs', new TextEncoder().encode(JSON.stringify({ plan: planCreate(emptySnapshot(), { kind: 'pool', id: 'p2', name: 'p2', origin: 'api', revision: '', tenantId: 'default' } as never, 'api:after'), node: 'elsewhere', at: Date.now() })), { msgID: 'third' })).seq;
    await waitFor('caught up', () => st.config().lastSeq === last);
    const count = d.core.db.prepare("SELECT COUNT(*) AS n FROM revisions WHERE revision = 'api:twice'").get() as { n: number };
    assert.equal(count.n, 1);
    assert.equal((d.core.db.prepare("SELECT COUNT(*) AS n FROM cluster_applied WHERE revision = 'api:twice'").get() as { n: number }).n, 1);
    // a plan of an unknown kind cannot be applied: the node stalls at it and does not skip it
    const bad = { ...planCreate(emptySnapshot(), { kind: 'pool', id: 'p3', name: 'p3', origin: 'api', revision: '', tenantId: 'default' } as never, 'api:bad') };
    bad.changes = [{ ...bad.changes[0]!, kind: 'no-such-kind', after: { ...bad.changes[0]!.after!, kind: 'no-such-kind' } as never }];
    const badSeq = (await send(bad, 'bad')).seq;
    const after = planCreate(emptySnapshot(), { kind: 'pool', id: 'p4', name: 'p4', origin: 'api', revision: '', tenantId: 'default' } as never, 'api:blocked');
    await send(after, 'blocked');
    await waitFor('stalled', () => st.config().stalled?.includes(`seq ${badSeq}`), 10_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(getRow(d.core.holder.current, 'pool', 'p4'), undefined, 'later plans wait behind the stalled one');
    assert.equal(st.config().lastSeq, last);
    assert.match(await d.core.metrics.getSingleMetricAsString('gslbd_state_config_apply_failures_total'), / [1-9]\d*$/m);
  } finally {
    await nc.close();
  }
});
