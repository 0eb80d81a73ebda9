import type { MemberRow, PoolRow } from '../../core/model/types.js';
import { childrenOf, getRow, rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';

/** One `bgp.poolPrefixes` entry (defaults filled in). */
export interface PoolPrefixes { poolID: string; prefixes: string[]; withdrawThreshold: number }

/** Why a pool's prefixes are announced or withdrawn (PascalCase, as status reasons are). */
export type PoolReason = 'Healthy' | 'BelowThreshold' | 'NoHealthyMember' | 'NoEnabledMember' | 'PoolNotFound' | 'PoolNameAmbiguous';

/** The verdict on one `bgp.poolPrefixes` entry. */
export interface PoolVerdict extends PoolPrefixes {
  /** the pool's row id, null when `poolID` names no pool (or several by name) */
  poolId: string | null;
  enabledMembers: number;
  healthyMembers: number;
  announce: boolean;
  reason: PoolReason;
}

/**
 * The pool a `poolID` names: the pool with that id, else the one pool with that name (git pools
 * get generated ids, so operators may write the name). Several pools of that name: ambiguous.
 */
export function resolvePool(s: Snapshot, poolID: string): { pool?: PoolRow; reason?: PoolReason } {
  const byId = getRow<PoolRow>(s, 'pool', poolID);
  if (byId) return { pool: byId };
  const named = [...rowsOf<PoolRow>(s, 'pool').values()].filter((p) => p.name === poolID);
  if (named.length === 1) return { pool: named[0]! };
  return { reason: named.length ? 'PoolNameAmbiguous' : 'PoolNotFound' };
}

/**
 * Decides each entry (docs/bgp.md "Pool prefixes"): only enabled members count; a member is
 * healthy as DNS sees it (`isHealthy`, the active health policy). The prefixes are announced when
 * at least one member is healthy and healthy / enabled ≥ `withdrawThreshold` (0: any healthy
 * member keeps them; 0.5: withdrawn below half). A pool with no enabled member, or that does not
 * exist, is withdrawn. Pure.
 */
export function evaluatePools(entries: readonly PoolPrefixes[], s: Snapshot, isHealthy: (poolId: string, ip: string) => boolean): PoolVerdict[] {
  return entries.map((e) => {
    const { pool, reason } = resolvePool(s, e.poolID);
    if (!pool) return { ...e, poolId: null, enabledMembers: 0, healthyMembers: 0, announce: false, reason: reason! };
    const enabled = childrenOf<MemberRow>(s, pool.id, 'member').filter((m) => m.enabled);
    const healthy = enabled.filter((m) => isHealthy(pool.id, m.ipAddress)).length;
    const verdict = (announce: boolean, why: PoolReason): PoolVerdict => ({ ...e, poolId: pool.id, enabledMembers: enabled.length, healthyMembers: healthy, announce, reason: why });
    if (enabled.length === 0) return verdict(false, 'NoEnabledMember');
    if (healthy === 0) return verdict(false, 'NoHealthyMember');
    if (healthy / enabled.length < e.withdrawThreshold) return verdict(false, 'BelowThreshold');
    return verdict(true, 'Healthy');
  });
}

/** Node prefixes plus the prefixes of every pool announced, each once, in a stable order. */
export function desiredPrefixes(nodePrefixes: readonly string[], verdicts: readonly PoolVerdict[]): string[] {
  const out = new Set(nodePrefixes);
  for (const v of verdicts) if (v.announce) for (const p of v.prefixes) out.add(p);
  return [...out].sort();
}
