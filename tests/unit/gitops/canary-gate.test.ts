import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canaryGate } from '../../../gitops/reconcile/canary.js';
import type { Reconciler } from '../../../gitops/reconcile.js';
import type { Planned } from '../../../gitops/reconcile/plan.js';
import { ReconcileError } from '../../../gitops/errors.js';
import type { CanaryPort, CanaryState } from '../../../gitops/canary/port.js';

const SHA = 'b'.repeat(40);
const OLD = 'a'.repeat(40);
const change = { op: 'create' as const, kind: 'pool', id: 'p', label: 'pool', fields: [] };
const planned = (o: { changes?: number; drift?: boolean; unchanged?: boolean } = {}): Planned => ({
  plan: { revision: SHA, origin: 'git', baseVersion: 0, changes: Array.from({ length: o.changes ?? 1 }, () => change), counts: { create: 1, update: 0, delete: 0 }, safety: { safe: true, existing: 0, updates: 0, deletes: 0, maxChangePercent: 30, minExisting: 10 } },
  drift: o.drift ?? false, unchanged: o.unchanged ?? false,
});

/** A reconciler with only what the gate reads; `superseded` records what it aborted. */
function fake(o: { state?: CanaryState; inFlight?: { revision: string; phase: 'queued' | 'baking' }; lastApplied?: string | undefined; canary?: boolean; port?: boolean; decidedBefore?: boolean }) {
  const superseded: string[] = [];
  const port: CanaryPort = {
    state: () => o.state, inFlight: () => o.inFlight, start: () => undefined, status: () => null,
    supersede: async (rev, by) => { superseded.push(`${rev}>${by}`); return !o.decidedBefore; },
  };
  const r = {
    core: { config: { gitops: { canary: o.canary === false ? undefined : { nodes: ['a'], bakeTime: '1m', minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 } } }, ports: o.port === false ? {} : { canary: port } },
    store: { lastApplied: () => ('lastApplied' in o ? o.lastApplied : OLD), history: () => [] },
    status: {}, metrics: {},
  } as unknown as Reconciler;
  return { r, superseded };
}

const rows: { name: string; given: Parameters<typeof fake>[0]; planned?: Planned; want: string }[] = [
  { name: 'no gitops.canary', given: { canary: false }, want: 'direct' },
  { name: 'no config sync (no port)', given: { port: false }, want: 'direct' },
  { name: 'a new revision', given: {}, want: 'canary' },
  { name: 'the first revision: nothing to return to', given: { lastApplied: undefined }, want: 'direct' },
  { name: 'an empty plan is recorded as usual', given: {}, planned: planned({ changes: 0 }), want: 'direct' },
  { name: 'a drift correction is not a new revision', given: {}, planned: planned({ drift: true }), want: 'direct' },
  { name: 'queued: waits', given: { state: { phase: 'queued', reason: null, settled: false } }, want: 'waiting CanaryBaking' },
  { name: 'baking: waits', given: { state: { phase: 'baking', reason: null, settled: false } }, want: 'waiting CanaryBaking' },
  { name: 'promoted, not yet applied here: waits', given: { state: { phase: 'promoted', reason: null, settled: false } }, want: 'waiting CanaryBaking' },
  { name: 'promoted and applied here', given: { state: { phase: 'promoted', reason: null, settled: true } }, planned: planned({ changes: 0, unchanged: true }), want: 'direct' },
  { name: 'aborted: refused until a newer commit', given: { state: { phase: 'aborted', reason: 'node a: healthy members 0/1', settled: true } }, want: 'stalled CanaryFailed' },
  { name: 'aborted is judged before anything else', given: { state: { phase: 'aborted', reason: 'x', settled: true }, lastApplied: undefined }, want: 'stalled CanaryFailed' },
  { name: 'another revision bakes: it is superseded', given: { inFlight: { revision: OLD, phase: 'baking' } }, want: 'waiting CanaryBaking' },
  { name: 'another revision bakes but this node decided it already: waits for that decision', given: { inFlight: { revision: OLD, phase: 'baking' }, decidedBefore: true }, want: 'waiting CanaryBaking' },
  { name: 'another revision is still in the outbox: wait, an abort must not overtake it', given: { inFlight: { revision: OLD, phase: 'queued' } }, want: 'waiting CanaryBaking' },
];

const messages = new Map<string, string>();

test('canary gate of the controller: direct, canary, waiting or refused', async () => {
  for (const row of rows) {
    const { r, superseded } = fake(row.given);
    let got: string;
    try {
      got = await canaryGate(r, SHA, row.planned ?? planned());
    } catch (err) {
      assert.ok(err instanceof ReconcileError, row.name);
      got = `${err.errorClass} ${err.reason}`;
      messages.set(row.name, err.message);
      if (err.reason === 'CanaryFailed') assert.match(err.message, /was aborted: .*push a newer commit/, row.name);
    }
    assert.equal(got, row.want, row.name);
    assert.deepEqual(superseded, row.given.inFlight?.phase === 'baking' && row.given.inFlight.revision !== SHA ? [`${OLD}>${SHA.slice(0, 12)}`] : [], row.name);
  }
});

test('canary gate: the message says whether the baking revision was superseded now or decided before', () => {
  assert.match(messages.get('another revision bakes: it is superseded')!, /aborted as superseded by bbbbbbbbbbbb/);
  assert.match(messages.get('another revision bakes but this node decided it already: waits for that decision')!, /was decided already/);
});
