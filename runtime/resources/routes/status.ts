import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { MemberRow } from '../../../core/model/types.js';
import { findMember, findPool, membersOf } from '../pool-rows.js';
import { apiRef, errorResponses, idParams, type IdParams } from '../../api/schemas.js';

const status = apiRef('resources', 'MemberStatus');
const tags = ['status'];

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
  app.get<{ Params: IdParams }>('/pools/:id/status', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getPoolStatus', summary: 'Health of every member of a pool', tags, params: idParams, response: { 200: { description: 'one entry per member, in storage order', type: 'array', items: status }, ...errorResponses(400, 404) } },
  }, async (req) => {
    const pool = findPool(core, req.principal, req.params.id);
    return membersOf(core, pool.id).map((m) => memberStatus(core, m));
  });
  app.get<{ Params: IdParams }>('/members/:id/status', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getMemberStatus', summary: 'Health of one member', tags, params: idParams, response: { 200: { description: 'the member\'s health', ...status }, ...errorResponses(400, 404) } },
  }, async (req) => memberStatus(core, findMember(core, req.principal, req.params.id)));
};
