import type { Core } from '../app.js';
import type { GeoRuleRow, HealthCheckRow, MemberRow, PoolRow } from '../../core/model/types.js';
import { STATIC_POOL_ID, staticPoolOf, type StaticPool } from '../config/static-pool.js';
import { childrenOf } from '../../core/snapshot/snapshot.js';
import { listVisible, requireRow, visibleTo, type Viewer } from '../tenancy/visibility.js';
import { assertApiWritable } from '../../core/plan/delta.js';
import { notFound } from '../errors.js';

/**
 * Pools as readers see them: the snapshot's rows plus the config file's static pool
 * (runtime/config/static-pool.ts), which belongs to the system (tenant `default`, like the config
 * repo's rows: supra-tenant callers and that tenant see it, other tenants get 404 and never find
 * it in a list). Writes to it answer 409 (`assertApiWritable`).
 */
export type PoolReader = Pick<Core, 'config' | 'holder'>;

/** The static pool when one is configured and the viewer may see it. */
function staticFor(core: PoolReader, viewer: Viewer): StaticPool | undefined {
  const sp = staticPoolOf(core.config);
  return sp && visibleTo(viewer, sp.pool) ? sp : undefined;
}

/** Every pool the viewer may see: the static pool first, then the snapshot's in storage order. */
export function visiblePools(core: PoolReader, viewer: Viewer): PoolRow[] {
  const rows = listVisible<PoolRow>(core.holder.current, viewer, 'pool');
  const sp = staticFor(core, viewer);
  return sp ? [sp.pool, ...rows] : rows;
}

/** A pool by id that the viewer may see, or 404. */
export function findPool(core: PoolReader, viewer: Viewer, id: string): PoolRow {
  if (id !== STATIC_POOL_ID) return requireRow<PoolRow>(core.holder.current, viewer, 'pool', id);
  const sp = staticFor(core, viewer);
  if (!sp) throw notFound(`pool ${id} not found`);
  return sp.pool;
}

/** A pool the viewer may see and change over REST: 404 as {@link findPool}, 409 for a git or config pool. */
export function findWritablePool(core: PoolReader, viewer: Viewer, id: string, action?: string): PoolRow {
  const pool = findPool(core, viewer, id);
  if (pool.origin === 'config') assertApiWritable(pool, action);
  return pool;
}

/** The members of a pool (found with {@link findPool}), in storage (or file) order. */
export function membersOf(core: PoolReader, poolId: string): readonly MemberRow[] {
  if (poolId === STATIC_POOL_ID) return staticPoolOf(core.config)?.members ?? [];
  return childrenOf<MemberRow>(core.holder.current, poolId, 'member');
}

/** A member by id that the viewer may see, or 404. */
export function findMember(core: PoolReader, viewer: Viewer, id: string): MemberRow {
  // stored rows have UUIDs: only the static pool's members carry its prefix (staticMemberId)
  if (!id.startsWith(`${STATIC_POOL_ID}:`)) return requireRow<MemberRow>(core.holder.current, viewer, 'member', id);
  const m = staticFor(core, viewer)?.members.find((x) => x.id === id);
  if (!m) throw notFound(`member ${id} not found`);
  return m;
}

/** A member the viewer may see and change over REST: 404 as {@link findMember}, 409 for a config member. */
export function findWritableMember(core: PoolReader, viewer: Viewer, id: string, action?: string): MemberRow {
  const m = findMember(core, viewer, id);
  if (m.origin === 'config') assertApiWritable(m, action);
  return m;
}

/** The health check of a pool (found with {@link findPool}), if it has one. */
export function healthCheckOf(core: PoolReader, poolId: string): HealthCheckRow | undefined {
  if (poolId === STATIC_POOL_ID) return staticPoolOf(core.config)?.healthCheck;
  return childrenOf<HealthCheckRow>(core.holder.current, poolId, 'healthcheck')[0];
}

/** The geo rules of a pool (found with {@link findPool}); the static pool has none (its rules are `loadbalancer.mapFile`). */
export function geoRulesOf(core: PoolReader, poolId: string): readonly GeoRuleRow[] {
  if (poolId === STATIC_POOL_ID) return [];
  return childrenOf<GeoRuleRow>(core.holder.current, poolId, 'georule');
}
