import type { Candidate } from './types.js';

/** Sort key of a priority: 0 (unset) sorts after every numbered priority. */
function rank(p: number): number {
  return p > 0 ? p : Number.MAX_SAFE_INTEGER;
}

/**
 * Failover: exactly one member, the one with the lowest priority (0 last); within a tier a higher
 * score wins, then storage order. Unhealthy and disabled members were removed before this step, so
 * a recovered higher-priority member wins again at once (automatic failback). Empty in, empty out.
 * Returns a new array, or `into` (its previous contents replaced) when given.
 */
export function failover(cands: readonly Candidate[], into?: Candidate[]): Candidate[] {
  let best: Candidate | undefined;
  for (const c of cands) {
    if (c.weight <= 0) continue;
    if (!best) { best = c; continue; }
    const d = rank(c.priority) - rank(best.priority);
    if (d < 0 || (d === 0 && (c.score > best.score || (c.score === best.score && c.order < best.order)))) best = c;
  }
  const out = into ?? [];
  if (best) out[0] = best;
  const n = best ? 1 : 0;
  if (out.length !== n) out.length = n;
  return out;
}
