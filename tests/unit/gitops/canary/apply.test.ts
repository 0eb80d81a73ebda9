import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../../../runtime/store/db.js';
import { ResourceStore } from '../../../../core/store/resources.js';
import { EventBus } from '../../../../core/events/bus.js';
import { SnapshotHolder, applyPlan } from '../../../../core/apply/apply.js';
import { applyPlanSliced } from '../../../../core/apply/apply-sliced.js';
import { WriteGate } from '../../../../core/apply/gate.js';
import { planChanges } from '../../../../core/plan/plan.js';
import type { Change, DesiredRow, Plan } from '../../../../core/plan/types.js';
import { emptySnapshot, getRow } from '../../../../core/snapshot/snapshot.js';
import type { MemberRow, Row } from '../../../../core/model/types.js';
import { ConfigLedger } from '../../../../runtime/cluster/ledger.js';
import { CanaryStore } from '../../../../gitops/canary/store.js';
import { admit, OPEN_GATE, type GateState } from '../../../../gitops/canary/gate.js';
import { runGateStep } from '../../../../gitops/canary/apply.js';
import type { CanarySpec, StreamItem } from '../../../../gitops/canary/msg.js';

/** One node: its database, snapshot, ledger and canary table, and a consumer's gate over them. */
function node(self: string) {
  const db = openDatabase(':memory:');
  const store = new ResourceStore(db);
  const holder = new SnapshotHolder(emptySnapshot());
  const bus = new EventBus((err) => { throw err; });
  const settled: string[] = [];
  bus.on('gitops_canary', (e) => settled.push(`${e.verdict}:${e.revision}`));
  const gate = new WriteGate();
  const core = {
    holder, bus, applyGate: gate,
    apply: (p: Plan, o?: Parameters<typeof applyPlan>[2]) => applyPlan({ store, holder, bus, gate }, p, o),
    applySliced: (p: Plan, o?: Parameters<typeof applyPlan>[2]) => applyPlanSliced({ store, holder, bus, gate }, p, o),
  };
  const ledger = new ConfigLedger(db);
  const canaries = new CanaryStore(db);
  let canaryGate: GateState = OPEN_GATE;
  const env = { self, decided: (r: string) => ({ promoted: 'promote', aborted: 'abort' } as const)[canaries.get(r)?.phase as 'promoted'] };
  return {
    self, db, store, holder, ledger, canaries, settled,
    /** the consumer after a (re)connection: a fresh gate from the ledger's next sequence */
    restart() { canaryGate = OPEN_GATE; },
    async feed(items: StreamItem[]) {
      for (const item of items) {
        if (item.seq <= ledger.lastSeq()) continue;
        const out = admit(canaryGate, item, env);
        canaryGate = out.state;
        for (const s of out.steps) assert.equal((await runGateStep({ core, ledger, store: canaries, timeoutMs: 500 }, s)).applied, true, `${self}: ${s.op}@${s.seq}`);
      }
    },
    rows: () => JSON.stringify(store.loadAll().sort((x, y) => `${x.kind}/${x.id}`.localeCompare(`${y.kind}/${y.id}`))),
  };
}

/** The member both plans change. */
const web = (n: { holder: SnapshotHolder }) => getRow<MemberRow>(n.holder.current, 'member', 'member:web/10.0.0.1:80');
const member = (pool: string, ip: string, weight = 1, rumUrl: string | null = null): DesiredRow => ({
  kind: 'member', key: `${pool}/${ip}:80`, fields: { ipAddress: ip, port: 80, weight, priority: 0, enabled: true, rumUrl }, refs: [{ field: 'poolId', kind: 'pool', key: pool }],
});
const poolRow = (name: string): DesiredRow => ({ kind: 'pool', key: name, fields: { name } });
const gitPlan = (revision: string, desired: DesiredRow[], base: SnapshotHolder): Plan =>
  planChanges({ desired, actual: base.current, revision, newId: (k, key) => `${k}:${key}`, tenantId: 'default' });

const spec: CanarySpec = { nodes: ['a'], bakeMs: 1, thresholds: { minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 }, publishedAt: 0, previous: { revision: 'c0', signer: 'FPR0' } };
const plan = (seq: number, p: Plan, canary = false): StreamItem => ({ seq, plan: { plan: p, node: 'leader', at: 0, signer: 'FPR', ...(canary ? { canary: spec } : {}) } });
const decision = (seq: number, revision: string, verdict: 'promote' | 'abort'): StreamItem => ({ seq, decision: { revision, verdict, reason: verdict === 'abort' ? 'node a: healthy members 0/1' : null, node: 'leader', at: 0, verdicts: [] } });

/**
 * The stream of the scenario, computed on a reference node: c0 (web with one member, old with one
 * member), the canary revision c1 (the member's weight and RUM URL changed, pool new created, pool
 * old deleted with its member), and a REST plan made on a node without c1 (a pool created; the
 * same member's weight, which c1 changed too, and its priority, which c1 did not).
 */
function scenario() {
  const ref = node('ref');
  const c0 = gitPlan('c0', [poolRow('web'), member('web', '10.0.0.1'), poolRow('old'), member('old', '10.0.0.9')], ref.holder);
  ref.holder.current = applyPlan({ store: ref.store, holder: ref.holder, bus: new EventBus() }, c0);
  const c1 = gitPlan('c1', [poolRow('web'), member('web', '10.0.0.1', 5, 'https://rum.example/x'), poolRow('new'), member('new', '10.0.0.2')], ref.holder);
  const m = getRow(ref.holder.current, 'member', 'member:web/10.0.0.1:80')!;
  const after = { ...m, weight: 7, priority: 3, revision: 'api:1', origin: 'api' } as Row;
  const restPool = { id: 'pool:rest', kind: 'pool', name: 'rest', origin: 'api', revision: 'api:1', tenantId: 'default' } as Row;
  const changes: Change[] = [
    { op: 'create', kind: 'pool', id: 'pool:rest', label: 'pool "rest"', after: restPool, fields: [] },
    { op: 'update', kind: 'member', id: m.id, label: 'member', before: m, after, fields: [{ field: 'weight', before: 1, after: 7 }, { field: 'priority', before: 0, after: 3 }] },
  ];
  const rest: Plan = { ...c0, revision: 'api:1', origin: 'api', changes, counts: { create: 1, update: 1, delete: 0 } };
  return { c0, c1, rest };
}

for (const verdict of ['abort', 'promote'] as const) {
  test(`canary ${verdict}: the canary node and the others end with the same rows, in stream order`, async () => {
    const { c0, c1, rest } = scenario();
    const a = node('a');
    const b = node('b');
    const stream = [plan(1, c0), plan(2, c1, true), plan(3, rest), decision(4, 'c1', verdict)];
    await a.feed(stream.slice(0, 3));
    await b.feed(stream.slice(0, 3));
    // during the bake: a serves c1 and the REST plan; b holds both and records nothing
    assert.deepEqual([web(a)?.weight, web(a)?.rumUrl], [7, 'https://rum.example/x']);
    assert.ok(getRow(a.holder.current, 'pool', 'pool:rest'));
    assert.equal(web(b)?.weight, 1);
    assert.equal(getRow(b.holder.current, 'pool', 'pool:rest'), undefined, 'the REST plan waits behind the held canary plan');
    assert.equal(b.ledger.lastSeq(), 1);
    assert.equal(b.canaries.get('c1')?.phase, 'baking');
    assert.equal(a.canaries.appliedPlanOf('c1')?.changes.length, c1.changes.length);

    await a.feed(stream.slice(3));
    await b.feed(stream.slice(3));
    assert.equal(a.rows(), b.rows());
    for (const n of [a, b]) {
      assert.equal(n.ledger.lastSeq(), 4, n.self);
      assert.equal(n.canaries.get('c1')?.phase, verdict === 'abort' ? 'aborted' : 'promoted', n.self);
      assert.deepEqual(n.settled, [`${verdict}:c1`], n.self);
      const m = web(n)!;
      assert.deepEqual([m.weight, m.priority, m.revision], [7, 3, 'api:1'], `${n.self}: the REST plan's fields and ownership stay`);
      assert.equal(m.rumUrl, verdict === 'abort' ? null : 'https://rum.example/x', `${n.self}: the canary's own field`);
      assert.equal(Boolean(getRow(n.holder.current, 'pool', 'pool:old')), verdict === 'abort', n.self);
      assert.equal(Boolean(getRow(n.holder.current, 'member', 'member:old/10.0.0.9:80')), verdict === 'abort', `${n.self}: a deleted child comes back with its parent`);
      assert.equal(Boolean(getRow(n.holder.current, 'pool', 'pool:new')), verdict === 'promote', n.self);
    }
    if (verdict === 'abort') {
      // the canary node records the undo as the revision it returned to, with that revision's signer
      assert.equal(a.holder.provenance.commit, 'c0');
      assert.equal(a.holder.provenance.signer, 'FPR0');
      assert.equal(b.ledger.seqOf('c1'), 2, 'the skipped canary plan is recorded, so it is never held again');
      assert.deepEqual(b.ledger.applied().find((r) => r.seq === 2)?.changes, 0);
    }
  });
}

test('a node restarted while holding reads the canary plan again, holds it again, and applies everything once', async () => {
  const { c0, c1, rest } = scenario();
  const b = node('b');
  const stream = [plan(1, c0), plan(2, c1, true), plan(3, rest), decision(4, 'c1', 'promote')];
  await b.feed(stream.slice(0, 3));
  b.restart();
  // the consumer resumes after the last recorded sequence: the held canary plan
  assert.equal(b.ledger.lastSeq() + 1, 2);
  await b.feed(stream.slice(1, 3));
  assert.equal(b.ledger.lastSeq(), 1, 'still holding: nothing recorded');
  await b.feed(stream.slice(3));
  assert.deepEqual(b.ledger.applied().map((r) => r.seq), [1, 2, 3, 4]);
  assert.equal(web(b)?.rumUrl, 'https://rum.example/x');
  // a decision delivered twice is recorded once
  await b.feed([decision(5, 'c1', 'abort')]);
  assert.equal(b.canaries.get('c1')?.phase, 'promoted', 'the first decision in stream order wins');
  assert.deepEqual(b.settled, ['promote:c1']);
});
