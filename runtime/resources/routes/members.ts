import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { MemberRow, PoolRow } from '../../model/types.js';
import { toApi } from '../../model/public.js';
import { memberCreateFields, memberUpdateFields } from '../../model/normalize.js';
import { planCreate, planDelete, planUpdate } from '../../../controller/plan/delta.js';
import { childrenOf, getRow } from '../../snapshot/snapshot.js';
import { conflict } from '../../errors.js';
import { requireRow } from '../../tenancy/visibility.js';
import { write } from '../write.js';
import { idParams, ref } from '../../api/schemas.js';

function assertUniqueEndpoint(core: Core, poolId: string, ip: string, port: number, selfId?: string): void {
  const dup = childrenOf<MemberRow>(core.holder.current, poolId, 'member').find((m) => m.ipAddress === ip && m.port === port && m.id !== selfId);
  if (dup) throw conflict(`pool ${poolId} already has a member ${ip}:${port} (${dup.id})`);
}

/** Members of a pool: create under a pool, list, read, update, delete. */
export const memberRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.post('/pools/:id/members', { config: { permission: 'pools:write' }, schema: { tags: ['members'], params: idParams, body: ref('MemberCreate') } }, async (req, reply) => {
    const pool = requireRow<PoolRow>(core.holder.current, req.principal, 'pool', (req.params as { id: string }).id);
    const f = memberCreateFields(req.body as Record<string, unknown>);
    assertUniqueEndpoint(core, pool.id, f.ipAddress, f.port);
    const row: MemberRow = { kind: 'member', id: core.newId(), poolId: pool.id, ...f, origin: 'api', revision: '', tenantId: pool.tenantId };
    const s = write(core, (snap, rev) => planCreate(snap, row, rev));
    return reply.status(201).send(toApi(getRow(s, 'member', row.id)!));
  });
  app.get('/pools/:id/members', { config: { permission: 'pools:read' }, schema: { tags: ['members'], params: idParams } }, async (req) => {
    const pool = requireRow(core.holder.current, req.principal, 'pool', (req.params as { id: string }).id);
    return childrenOf(core.holder.current, pool.id, 'member').map(toApi);
  });
  app.get('/members/:id', { config: { permission: 'pools:read' }, schema: { tags: ['members'], params: idParams } }, async (req) =>
    toApi(requireRow(core.holder.current, req.principal, 'member', (req.params as { id: string }).id)));
  app.put('/members/:id', { config: { permission: 'pools:write' }, schema: { tags: ['members'], params: idParams, body: ref('MemberUpdate') } }, async (req) => {
    const { id } = req.params as { id: string };
    const cur = requireRow<MemberRow>(core.holder.current, req.principal, 'member', id);
    const next = memberUpdateFields(cur, req.body as Record<string, unknown>);
    if (next.ipAddress !== cur.ipAddress || next.port !== cur.port) assertUniqueEndpoint(core, cur.poolId, next.ipAddress, next.port, cur.id);
    const s = write(core, (snap, rev) => planUpdate(snap, cur, next, rev));
    return toApi(getRow(s, 'member', id)!);
  });
  app.delete('/members/:id', { config: { permission: 'pools:write' }, schema: { tags: ['members'], params: idParams } }, async (req, reply) => {
    const cur = requireRow(core.holder.current, req.principal, 'member', (req.params as { id: string }).id);
    write(core, (snap, rev) => planDelete(snap, cur, rev));
    return reply.status(204).send();
  });
};
