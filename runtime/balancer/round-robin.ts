import type { Candidate } from './types.js';
import { tierEnd } from './score-sort.js';

/**
 * Round-robin: constant-cost rotation by the query sequence number, with no external state.
 * Input is score-sorted; each tier of equal score rotates on its own and tiers keep their order,
 * so a lower-scored member is never put ahead of a better one. Returns a new array, or `into`
 * (its previous contents replaced) when given: the answer path lends one so a query allocates
 * nothing.
 */
export function roundRobin(cands: readonly Candidate[], seq: number, into?: Candidate[]): Candidate[] {
  const n = cands.length;
  const out = into ?? new Array<Candidate>(n);
  let start = 0;
  while (start < n) {
    const end = tierEnd(cands, start);
    const size = end - start;
    const shift = size > 1 ? seq % size : 0;
    for (let i = 0; i < size; i++) out[start + i] = cands[start + ((i + shift) % size)]!;
    start = end;
  }
  // Slots are written in ascending order, so `into` only grows by appends (no holes) before this.
  if (out.length !== n) out.length = n;
  return out;
}
