import type { Candidate, Rng } from './types.js';
import { tierEnd } from './score-sort.js';

/**
 * Weighted round-robin: members with weight 0 are left out; within each tier of equal score the
 * order is a weighted random draw without replacement, so a member comes first with probability
 * weight / (sum of weights in its tier). Input is score-sorted. Returns a new array (the only
 * allocation: draws swap in place).
 */
export function weightedRoundRobin(cands: readonly Candidate[], rand: Rng): Candidate[] {
  const out = cands.filter((c) => c.weight > 0);
  let start = 0;
  while (start < out.length) {
    const end = tierEnd(out, start);
    let total = 0;
    for (let i = start; i < end; i++) total += out[i]!.weight;
    for (let k = start; k < end - 1; k++) {
      let r = rand() * total;
      let j = k;
      while (j < end - 1 && r >= out[j]!.weight) { r -= out[j]!.weight; j++; }
      // Move the drawn member to position k, keeping the others in their relative order.
      const picked = out[j]!;
      for (let m = j; m > k; m--) out[m] = out[m - 1]!;
      out[k] = picked;
      total -= picked.weight;
    }
    start = end;
  }
  return out;
}
