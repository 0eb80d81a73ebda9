import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { MemberRow, PoolRow } from '../../model/types.js';
import { childrenOf } from '../../snapshot/snapshot.js';
import { requireRow } from '../../tenancy/visibility.js';
import { idParams } from '../../api/schemas.js';

/**
 * Health status of one member: the live view when a checker has reported, else the stored value,
 * else the optimistic default (healthy, score 1, never checked).
 */
export function memberStatus(core: Core, m: MemberRow) {
  const e = core.health.get(m.poolId, m.ipAddress);
  return {
    memberId: m.id,
    poolId: m.poolId,
    ipAddress: m.ipAddress,
    port: m.port,
    enabled: m.enabled,
    healthy: e?.healthy ?? true,
    score: e?.score ?? 1,
    lastChecked: e?.lastChecked ?? 0,
    rttMs: e?.rttMs ?? 0,
    node: e?.node ?? core.config.node.id,
  };
}

/** GET /pools/{id}/status and GET /members/{id}/status. */
export const statusRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.get('/pools/:id/status', { config: { permission: 'pools:read' }, schema: { tags: ['status'], params: idParams } }, async (req) => {
    const pool = requireRow<PoolRow>(core.holder.current, req.principal, 'pool', (req.params as { id: string }).id);
    return childrenOf<MemberRow>(core.holder.current, pool.id, 'member').map((m) => memberStatus(core, m));
  });
  app.get('/members/:id/status', { config: { permission: 'pools:read' }, schema: { tags: ['status'], params: idParams } }, async (req) =>
    memberStatus(core, requireRow<MemberRow>(core.holder.current, req.principal, 'member', (req.params as { id: string }).id)));
};
