import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_WEIGHT, weightedRoundRobin } from '../../../runtime/balancer/weighted.js';
import { cand, ips, seqRng } from './fixtures.js';

// Weighted selection at the SRV weight bound (RFC 2782: 16 bits) and past it (rows stored before
// the bound was enforced): exact integer tickets, no overflow, no lost weights.

const many = (n: number, weight: number) => Array.from({ length: n }, (_, i) => cand(`10.${(i >> 8) & 255}.${i & 255}.1`, { weight, order: i }));

test('weighted-round-robin is exact at the bound (table)', () => {
  const rows: { name: string; given: ReturnType<typeof many>; rand: number[]; wantFirst: string }[] = [
    { name: 'last ticket of the heavy member', given: [cand('a', { weight: MAX_WEIGHT }), cand('b', { weight: 1 })], rand: [(MAX_WEIGHT - 0.5) / (MAX_WEIGHT + 1)], wantFirst: 'a' },
    { name: 'the one ticket of the light member', given: [cand('a', { weight: MAX_WEIGHT }), cand('b', { weight: 1 })], rand: [MAX_WEIGHT / (MAX_WEIGHT + 1)], wantFirst: 'b' },
    { name: '10,000 members at the bound: the middle ticket', given: many(10_000, MAX_WEIGHT), rand: [0.5], wantFirst: '10.19.136.1' },
    { name: '10,000 members at the bound: the last ticket', given: many(10_000, MAX_WEIGHT), rand: [1 - 2 ** -53], wantFirst: '10.39.15.1' },
    { name: 'a source that returns 1 stays in range', given: [cand('a', { weight: MAX_WEIGHT }), cand('b', { weight: MAX_WEIGHT })], rand: [1], wantFirst: 'b' },
    { name: 'stored weights near 1e308 are clamped, not summed to Infinity', given: [cand('a', { weight: 1e308 }), cand('b', { weight: 1e308 })], rand: [0.25], wantFirst: 'a' },
    { name: 'a clamped weight does not swallow the small one', given: [cand('a', { weight: 1e300 }), cand('b', { weight: 1 })], rand: [MAX_WEIGHT / (MAX_WEIGHT + 1)], wantFirst: 'b' },
    { name: 'fractional stored weights draw as their integer part', given: [cand('a', { weight: 0.5 }), cand('b', { weight: 2.9 })], rand: [0], wantFirst: 'b' },
  ];
  for (const r of rows) {
    const out = weightedRoundRobin(r.given, seqRng(r.rand));
    assert.equal(out[0]!.ip, r.wantFirst, r.name);
  }
});

test('a full draw at the bound returns every member exactly once', () => {
  const given = many(2_000, MAX_WEIGHT);
  let x = 7;
  const out = weightedRoundRobin(given, () => ((x = (x * 48271) % 2147483647) / 2147483647));
  assert.equal(out.length, given.length);
  assert.equal(new Set(ips(out)).size, given.length);
});

test('shares follow the weights at the bound', () => {
  const given = [cand('a', { weight: MAX_WEIGHT }), cand('b', { weight: 21845 })]; // 3 : 1
  let x = 12345;
  const rng = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  let a = 0;
  for (let i = 0; i < 4000; i++) if (weightedRoundRobin(given, rng)[0]!.ip === 'a') a++;
  assert.ok(a / 4000 > 0.7 && a / 4000 < 0.8, `share of a ${a / 4000}`);
});

/** The plain draw without replacement, written out independently: a linear scan per ticket. */
function reference(cands: ReturnType<typeof many>, rand: () => number): string[] {
  const left = cands.filter((c) => c.weight > 0).map((c) => ({ ip: c.ip, w: Math.min(MAX_WEIGHT, Math.floor(c.weight)) }));
  const out: string[] = [];
  while (left.length > 1) {
    const total = left.reduce((s, c) => s + c.w, 0);
    let r = Math.min(total - 1, Math.floor(rand() * total));
    let j = 0;
    while (r >= left[j]!.w) r -= left[j++]!.w;
    out.push(left.splice(j, 1)[0]!.ip);
  }
  return [...out, ...left.map((c) => c.ip)];
}

// The time per selection at 10,000 members is measured by `npm run bench:balancer`.
test('large tiers (Fenwick tree) draw exactly what the plain scan draws', () => {
  for (const n of [33, 100, 1000]) {
    let seed = n;
    const weights = () => ((seed = (seed * 16807) % 2147483647) % (MAX_WEIGHT + 1));
    const given = Array.from({ length: n }, (_, i) => cand(`10.0.${i >> 8}.${i & 255}`, { weight: weights(), order: i }));
    const draws = (s: number) => { let x = s; return () => ((x = (x * 48271) % 2147483647) / 2147483647); };
    for (const s of [1, 2, 3]) assert.deepEqual(ips(weightedRoundRobin(given, draws(s))), reference(given, draws(s)), `n=${n} seed=${s}`);
  }
  const big = many(10_000, MAX_WEIGHT);
  const order = ips(weightedRoundRobin(big, Math.random));
  assert.equal(new Set(order).size, 10_000, '10,000 members at the bound: each drawn once');
});
