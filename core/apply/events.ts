import type { Change, Plan } from '../plan/types.js';
import { toApi } from '../model/public.js';

const ACTION = { create: 'created', update: 'updated', delete: 'deleted' } as const;

/** A WebSocket message of one change (pool_update, member_update, service_update), or undefined for other kinds. Pure. */
export function changeEvent(c: Change): { type: string; payload: unknown } | undefined {
  const row = c.after ?? c.before!;
  const action = ACTION[c.op];
  if (c.kind === 'pool') return { type: 'pool_update', payload: { action, pool: toApi(row) } };
  if (c.kind === 'member') return { type: 'member_update', payload: { action, poolId: (row as { poolId: string }).poolId, member: toApi(row) } };
  if (c.kind === 'service') return { type: 'service_update', payload: { action, service: toApi(row) } };
  return undefined;
}

/**
 * The WebSocket messages a plan produces (gslb-api.md §6): pool_update, member_update and
 * service_update, one per changed row, in plan order. Pure.
 */
export function planEvents(plan: Plan): { type: string; payload: unknown }[] {
  const out: { type: string; payload: unknown }[] = [];
  for (const c of plan.changes) {
    const e = changeEvent(c);
    if (e) out.push(e);
  }
  return out;
}
