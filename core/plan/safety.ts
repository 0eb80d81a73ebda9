import type { Change, Safety } from './types.js';

export interface SafetyOptions { maxChangePercent: number; minExisting: number }
export const DEFAULT_SAFETY: SafetyOptions = { maxChangePercent: 30, minExisting: 10 };

/**
 * Judges a plan the way octoDNS does: with at least `minExisting` rows in scope, more than
 * `maxChangePercent` % of them updated, or deleted, makes the plan unsafe. Pure.
 */
export function judgeSafety(changes: Change[], existing: number, opts: SafetyOptions = DEFAULT_SAFETY): Safety {
  const updates = changes.filter((c) => c.op === 'update').length;
  const deletes = changes.filter((c) => c.op === 'delete').length;
  const base: Safety = { safe: true, existing, updates, deletes, maxChangePercent: opts.maxChangePercent, minExisting: opts.minExisting };
  if (existing < opts.minExisting || existing === 0) return base;
  const limit = (existing * opts.maxChangePercent) / 100;
  if (deletes > limit) {
    return { ...base, safe: false, reason: 'TooManyDeletes', message: `plan deletes ${deletes} of ${existing} existing resources (limit ${opts.maxChangePercent}%); apply with force to proceed` };
  }
  if (updates > limit) {
    return { ...base, safe: false, reason: 'TooManyUpdates', message: `plan updates ${updates} of ${existing} existing resources (limit ${opts.maxChangePercent}%); apply with force to proceed` };
  }
  return base;
}
