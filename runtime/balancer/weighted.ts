import type { Candidate, Rng } from './types.js';
import { tierEnd } from './score-sort.js';

/** The largest weight (SRV weights are 16-bit, RFC 2782); the schemas refuse larger ones. */
export const MAX_WEIGHT = 65535;

/** Tiers up to this size draw with a linear scan; larger ones with a Fenwick tree. */
const LINEAR_MAX = 32;

/**
 * The weight a draw uses: an integer in 0..MAX_WEIGHT. Input is validated to that range; rows
 * stored before the bound existed (or from an older node) are clamped, so one huge weight can
 * neither overflow the sum to Infinity nor lose the smaller weights to float rounding. With at
 * most 65535 per member every sum is an integer far below 2^53, so all arithmetic is exact.
 */
function drawWeight(w: number): number {
  if (!(w > 0)) return 0; // also NaN
  return w >= MAX_WEIGHT ? MAX_WEIGHT : Math.floor(w);
}

/** An integer ticket in [0, total); min() guards an injected source that returns 1. */
function ticket(rand: Rng, total: number): number {
  return Math.min(total - 1, Math.floor(rand() * total));
}

/** The draw weights of the tier drawLinear is drawing, in its current order (drawing is synchronous: one is enough). */
const linearWeights = new Float64Array(LINEAR_MAX);

/** Draws out[start..end) in place with a linear scan per draw: O(n²), no allocation. */
function drawLinear(out: Candidate[], start: number, end: number, rand: Rng): void {
  const wts = linearWeights;
  const n = end - start;
  let total = 0;
  for (let i = 0; i < n; i++) { const w = drawWeight(out[start + i]!.weight); wts[i] = w; total += w; }
  for (let k = 0; k < n - 1; k++) {
    let r = ticket(rand, total);
    let j = k;
    while (j < n - 1 && r >= wts[j]!) { r -= wts[j]!; j++; }
    // Move the drawn member to position k, keeping the others in their relative order.
    const picked = out[start + j]!;
    const pw = wts[j]!;
    for (let m = j; m > k; m--) { out[start + m] = out[start + m - 1]!; wts[m] = wts[m - 1]!; }
    out[start + k] = picked;
    wts[k] = pw;
    total -= pw;
  }
}

/**
 * The same draw as drawLinear (same ticket, same member, same random numbers consumed) over a
 * Fenwick tree of the remaining weights in their original order: O(n log n), so a pool of 10,000
 * members costs about a millisecond per query instead of a second.
 */
function drawTree(out: Candidate[], start: number, end: number, rand: Rng): void {
  const n = end - start;
  const items = out.slice(start, end);
  const tree = new Float64Array(n + 1);
  let total = 0;
  for (let i = 1; i <= n; i++) {
    const w = drawWeight(items[i - 1]!.weight);
    total += w;
    tree[i]! += w;
    const parent = i + (i & -i);
    if (parent <= n) tree[parent]! += tree[i]!;
  }
  let top = 1;
  while (top * 2 <= n) top *= 2;
  for (let k = 0; k < n; k++) {
    // the last member needs no random number (as in drawLinear): ticket 0 finds it
    let r = k < n - 1 ? ticket(rand, total) : 0;
    // smallest index whose prefix sum exceeds r; removed members weigh 0 and are never found
    let pos = 0;
    for (let step = top; step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= n && tree[next]! <= r) { pos = next; r -= tree[next]!; }
    }
    const picked = items[pos]!;
    out[start + k] = picked;
    const w = drawWeight(picked.weight);
    total -= w;
    for (let i = pos + 1; i <= n; i += i & -i) tree[i]! -= w;
  }
}

/**
 * Weighted round-robin: members with weight 0 are left out; within each tier of equal score the
 * order is a weighted random draw without replacement, so a member comes first with probability
 * weight / (sum of weights in its tier). Tickets are exact integers (see drawWeight). Input is
 * score-sorted. Returns a new array, or `into` (its previous contents replaced) when given: the
 * answer path lends one so a query allocates nothing; large tiers also allocate their tree.
 */
export function weightedRoundRobin(cands: readonly Candidate[], rand: Rng, into?: Candidate[]): Candidate[] {
  const out = into ?? [];
  let n = 0;
  for (const c of cands) if (drawWeight(c.weight) > 0) out[n++] = c;
  if (out.length !== n) out.length = n;
  let start = 0;
  while (start < out.length) {
    const end = tierEnd(out, start);
    if (end - start <= LINEAR_MAX) drawLinear(out, start, end, rand);
    else drawTree(out, start, end, rand);
    start = end;
  }
  return out;
}
