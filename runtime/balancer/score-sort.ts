import type { Candidate } from './types.js';

/**
 * Candidates ordered by health score, highest first; equal scores keep their input order (stable).
 * Returns the input array itself when it is already in order (the common case: scoring off).
 */
export function sortByScore(cands: readonly Candidate[]): readonly Candidate[] {
  for (let i = 1; i < cands.length; i++) {
    if (cands[i]!.score > cands[i - 1]!.score) return [...cands].sort((a, b) => b.score - a.score);
  }
  return cands;
}

/** Length of the leading run of candidates with the same score as the first (the top tier). */
export function tierEnd(cands: readonly Candidate[], start: number): number {
  let i = start + 1;
  while (i < cands.length && cands[i]!.score === cands[start]!.score) i++;
  return i;
}
