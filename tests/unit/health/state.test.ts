import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyProbe, initialState, NO_FLIP, type StateSettings } from '../../../runtime/health/state.js';

type Step = { ok: boolean; at: number; want: { healthy: boolean; score: number; flipped: boolean; detectionMs?: number } };
const rows: { name: string; cfg: StateSettings; steps: Step[] }[] = [
  {
    name: 'scoring off, rise=fall=1: each result flips at once',
    cfg: { scoreWindow: 0, rise: 1, fall: 1 },
    steps: [
      { ok: true, at: 1000, want: { healthy: true, score: 1, flipped: false } },
      { ok: false, at: 2000, want: { healthy: false, score: 0, flipped: true, detectionMs: 1000 } },
      { ok: false, at: 3000, want: { healthy: false, score: 0, flipped: false } },
      { ok: true, at: 4000, want: { healthy: true, score: 1, flipped: true, detectionMs: 1000 } },
    ],
  },
  {
    name: 'optimistic start: a first failure flips down, detection counted from the start',
    cfg: { scoreWindow: 0, rise: 1, fall: 1 },
    steps: [{ ok: false, at: 500, want: { healthy: false, score: 0, flipped: true, detectionMs: 500 } }],
  },
  {
    name: 'fall=3: three consecutive failures; a success in between resets the streak',
    cfg: { scoreWindow: 0, rise: 1, fall: 3 },
    steps: [
      { ok: false, at: 1000, want: { healthy: true, score: 1, flipped: false } },
      { ok: false, at: 2000, want: { healthy: true, score: 1, flipped: false } },
      { ok: true, at: 3000, want: { healthy: true, score: 1, flipped: false } },
      { ok: false, at: 4000, want: { healthy: true, score: 1, flipped: false } },
      { ok: false, at: 5000, want: { healthy: true, score: 1, flipped: false } },
      { ok: false, at: 6000, want: { healthy: false, score: 0, flipped: true, detectionMs: 3000 } },
    ],
  },
  {
    name: 'rise=2: two consecutive successes to recover',
    cfg: { scoreWindow: 0, rise: 2, fall: 1 },
    steps: [
      { ok: false, at: 1000, want: { healthy: false, score: 0, flipped: true } },
      { ok: true, at: 2000, want: { healthy: false, score: 0, flipped: false } },
      { ok: true, at: 3000, want: { healthy: true, score: 1, flipped: true, detectionMs: 2000 } },
    ],
  },
  {
    name: 'scoring N=3: divisor is the number recorded before N; unhealthy only when the score reaches 0',
    cfg: { scoreWindow: 3, rise: 1, fall: 1 },
    steps: [
      { ok: true, at: 1, want: { healthy: true, score: 1, flipped: false } },
      { ok: false, at: 2, want: { healthy: true, score: 0.5, flipped: false } },
      { ok: false, at: 3, want: { healthy: true, score: 1 / 3, flipped: false } },
      { ok: false, at: 4, want: { healthy: false, score: 0, flipped: true, detectionMs: 1 } },
      { ok: true, at: 5, want: { healthy: true, score: 1 / 3, flipped: true, detectionMs: 1 } },
      { ok: true, at: 6, want: { healthy: true, score: 2 / 3, flipped: false } },
      { ok: true, at: 7, want: { healthy: true, score: 1, flipped: false } },
    ],
  },
  {
    name: 'scoring N=2 from the start: a first failure already scores 0',
    cfg: { scoreWindow: 2, rise: 1, fall: 1 },
    steps: [{ ok: false, at: 10, want: { healthy: false, score: 0, flipped: true } }],
  },
];

for (const row of rows) {
  test(`state machine: ${row.name}`, () => {
    const s = initialState(0);
    assert.equal(s.healthy, true);
    assert.equal(s.score, 1);
    for (const [i, st] of row.steps.entries()) {
      const detectionMs = applyProbe(s, st.ok, st.at, row.cfg);
      assert.equal(s.healthy, st.want.healthy, `step ${i} healthy`);
      assert.ok(Math.abs(s.score - st.want.score) < 1e-9, `step ${i} score ${s.score} want ${st.want.score}`);
      assert.equal(detectionMs !== NO_FLIP, st.want.flipped, `step ${i} flipped`);
      if (st.want.detectionMs !== undefined) assert.equal(detectionMs, st.want.detectionMs, `step ${i} detectionMs`);
    }
  });
}

test('scoring window: a ring of the last N results, successes over recorded', () => {
  const cfg = { scoreWindow: 4, rise: 1, fall: 1 };
  const s = initialState(0);
  const results = [true, false, false, true, true, true, false, false, false, false];
  const scores: number[] = [];
  for (const [i, ok] of results.entries()) {
    applyProbe(s, ok, i, cfg);
    scores.push(s.score);
  }
  // the last min(i + 1, 4) results: 1/1, 1/2, 1/3, 2/4, 2/4, 3/4, 3/4, 2/4, 1/4, 0/4
  assert.deepEqual(scores, [1, 0.5, 1 / 3, 0.5, 0.5, 0.75, 0.75, 0.5, 0.25, 0]);
  assert.equal(s.healthy, false, 'score reached 0');
  assert.equal(s.window.length, 4, 'the window never grows past N');
  assert.equal(s.probes, results.length);
});

test('applyProbe allocates no state per probe: the same object is updated', () => {
  const s = initialState(0);
  const w = (applyProbe(s, true, 1, { scoreWindow: 3, rise: 1, fall: 1 }), s.window);
  for (let i = 2; i < 100; i++) applyProbe(s, i % 3 === 0, i, { scoreWindow: 3, rise: 1, fall: 1 });
  assert.equal(s.window, w, 'the ring is allocated once');
});
