import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admit, OPEN_GATE, type GateEnv, type GateState, type GateStep } from '../../../../gitops/canary/gate.js';
import type { StreamItem } from '../../../../gitops/canary/msg.js';
import type { ConfigMsg } from '../../../../runtime/cluster/config-msg.js';

const spec = { nodes: ['a'], bakeMs: 1_000, thresholds: { minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 }, publishedAt: 0, previous: { revision: 'p0', signer: null } };
const msg = (revision: string, canary = false): ConfigMsg => ({
  plan: { revision, origin: 'git', baseVersion: 0, changes: [], counts: { create: 0, update: 0, delete: 0 }, safety: { safe: true, existing: 0, updates: 0, deletes: 0, maxChangePercent: 30, minExisting: 10 } },
  node: 'leader', at: 0, ...(canary ? { canary: spec } : {}),
});
// the stream as a compact list: `p:X` a plan, `c:X` a canary plan, `+X` promote X, `-X` abort X
const item = (seq: number, s: string): StreamItem => {
  if (s.startsWith('+') || s.startsWith('-')) return { seq, decision: { revision: s.slice(1), verdict: s.startsWith('+') ? 'promote' : 'abort', reason: null, node: 'leader', at: 0, verdicts: [] } };
  return { seq, plan: msg(s.slice(2), s.startsWith('c:')) };
};
// a step as `op@seq`
const show = (s: GateStep) => `${s.op}@${s.seq}`;

/** Feeds the stream (from seq 1) through one gate; returns the steps after each message and the final hold. */
function run(stream: string[], env: GateEnv, state: GateState = OPEN_GATE, from = 1): { steps: string[][]; holding: string | undefined } {
  const steps: string[][] = [];
  stream.forEach((s, i) => {
    const out = admit(state, item(from + i, s), env);
    state = out.state;
    steps.push(out.steps.map(show));
  });
  return { steps, holding: state.holding?.revision };
}

const canaryNode: GateEnv = { self: 'a', decided: () => undefined };
const otherNode: GateEnv = { self: 'b', decided: () => undefined };

const rows: { name: string; env: GateEnv; stream: string[]; want: string[][]; holding?: string }[] = [
  { name: 'ordinary plans are applied in order', env: otherNode, stream: ['p:1', 'p:2'], want: [['apply@1'], ['apply@2']] },
  { name: 'a canary node applies the canary plan at once and the rest as it comes', env: canaryNode, stream: ['c:X', 'p:R', '+X'], want: [['canary@1'], ['apply@2'], ['decide@3']] },
  { name: 'a canary node records an abort (it undoes what it applied there)', env: canaryNode, stream: ['c:X', 'p:R', '-X'], want: [['canary@1'], ['apply@2'], ['decide@3']] },
  {
    name: 'another node holds the canary plan and everything after it; promote applies them in stream order',
    env: otherNode, stream: ['p:0', 'c:X', 'p:R', 'p:S', '+X', 'p:T'], want: [['apply@1'], ['hold@2'], [], [], ['apply@2', 'apply@3', 'apply@4', 'decide@5'], ['apply@6']],
  },
  {
    name: 'abort skips the held canary plan and applies the rest in stream order',
    env: otherNode, stream: ['c:X', 'p:R', '-X'], want: [['hold@1'], [], ['skip@1', 'apply@2', 'decide@3']],
  },
  {
    name: 'a decision for another revision waits behind the held plan too',
    env: otherNode, stream: ['c:X', '-Y', '+X'], want: [['hold@1'], [], ['apply@1', 'decide@2', 'decide@3']],
  },
  {
    name: 'a canary plan released from a hold starts a new hold; its decision releases the rest',
    env: otherNode, stream: ['c:X', 'p:R', 'c:Y', '+X', 'p:S', '+Y'],
    want: [['hold@1'], [], [], ['apply@1', 'apply@2', 'hold@3'], [], ['apply@3', 'decide@4', 'apply@5', 'decide@6']],
  },
  { name: 'still holding at the end of the stream', env: otherNode, stream: ['c:X', 'p:R'], want: [['hold@1'], []], holding: 'X' },
  { name: 'a canary plan published again after its abort is skipped', env: { self: 'b', decided: (r) => (r === 'X' ? 'abort' : undefined) }, stream: ['c:X'], want: [['skip@1']] },
  { name: 'a canary plan published again after its promotion is applied (the ledger drops the duplicate)', env: { self: 'a', decided: (r) => (r === 'X' ? 'promote' : undefined) }, stream: ['c:X'], want: [['apply@1']] },
];

test('canary gate: hold, promote and abort keep stream order', () => {
  for (const r of rows) {
    const got = run(r.stream, r.env);
    assert.deepEqual(got.steps, r.want, r.name);
    assert.equal(got.holding, r.holding, `${r.name}: holding`);
  }
});

test('canary gate: a consumer restarted while holding reads the held plan again and holds it again', () => {
  // nothing after the held plan was recorded, so the ledger's next sequence is the canary plan's
  const before = run(['p:0', 'c:X', 'p:R'], otherNode);
  assert.deepEqual(before.steps, [['apply@1'], ['hold@2'], []]);
  const again = run(['c:X', 'p:R', '+X'], otherNode, OPEN_GATE, 2);
  assert.deepEqual(again.steps, [['hold@2'], [], ['apply@2', 'apply@3', 'decide@4']]);
});
