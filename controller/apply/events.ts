import type { Plan } from '../plan/types.js';
import { toApi } from '../../runtime/model/public.js';

const ACTION = { create: 'created', update: 'updated', delete: 'deleted' } as const;

/**
 * The WebSocket messages a plan produces (gslb-api.md §6): pool_update, member_update and
 * service_update, one per changed row, in plan order. Pure.
 */
export function planEvents(plan: Plan): { type: string; payload: unknown }[] {
  const out: { type: string; payload: unknown }[] = [];
  for (const c of plan.changes) {
    const row = c.after ?? c.before!;
    const action = ACTION[c.op];
    if (c.kind === 'pool') out.push({ type: 'pool_update', payload: { action, pool: toApi(row) } });
    else if (c.kind === 'member') out.push({ type: 'member_update', payload: { action, poolId: (row as { poolId: string }).poolId, member: toApi(row) } });
    else if (c.kind === 'service') out.push({ type: 'service_update', payload: { action, service: toApi(row) } });
  }
  return out;
}
