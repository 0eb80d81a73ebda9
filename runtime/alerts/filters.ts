import type { PoolRow, ServiceRow } from '../../core/model/types.js';
import { getRow, rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import type { AlertEvent } from './events.js';
import { EVENT_TYPE_OF, type AlertTargetRow } from './target-row.js';

/**
 * The tenant an event belongs to (docs/alerts.md "Tenancy"): a health flip belongs to its pool's
 * tenant, or to the operator tenant when this node no longer knows the pool (the operator may see
 * every tenant's pools, another tenant may not); GitOps events (apply, rejection, rollback) belong
 * to the operator tenant, since the config repo is the system's. Pure.
 */
export function eventTenant(ev: AlertEvent, s: Snapshot, operatorTenant: string): string {
  if (ev.type !== 'health_transition') return operatorTenant;
  return getRow<PoolRow>(s, 'pool', ev.poolId)?.tenantId ?? operatorTenant;
}

/**
 * Whether an alert-target row takes `ev`, whose tenant is `tenant` (eventTenant): the row is
 * enabled, of that tenant, subscribes to the event's name, and for a health flip its filters hold:
 * `pools` empty or naming the flip's pool (by name or id), and `services` empty or naming a service
 * of the tenant whose pool is the flip's pool. Filters only narrow; they never reach another
 * tenant's rows. Pure.
 */
export function targetAccepts(row: AlertTargetRow, ev: AlertEvent, tenant: string, s: Snapshot): boolean {
  if (!row.enabled || row.tenantId !== tenant) return false;
  if (!row.events.some((e) => EVENT_TYPE_OF[e] === ev.type)) return false;
  if (ev.type !== 'health_transition') return true;
  if (row.pools.length > 0) {
    const pool = getRow<PoolRow>(s, 'pool', ev.poolId);
    if (!row.pools.includes(ev.poolId) && !(pool && row.pools.includes(pool.name))) return false;
  }
  if (row.services.length > 0) {
    let hit = false;
    for (const svc of rowsOf<ServiceRow>(s, 'service').values()) {
      if (svc.tenantId === tenant && svc.poolId === ev.poolId && (row.services.includes(svc.id) || row.services.includes(svc.name))) { hit = true; break; }
    }
    if (!hit) return false;
  }
  return true;
}
