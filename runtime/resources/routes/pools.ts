import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { PoolRow } from '../../model/types.js';
import { toApi } from '../../model/public.js';
import { planCreate, planDelete, planUpdate } from '../../../controller/plan/delta.js';
import { getRow } from '../../snapshot/snapshot.js';
import { listVisible, requireRow, tenantFor } from '../../tenancy/visibility.js';
import { write } from '../write.js';
import { idParams, ref } from '../../api/schemas.js';

/** /pools: create, list, read, rename, delete (cascades to members, health check and geo rules). */
export const poolRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.post('/pools', { config: { permission: 'pools:write' }, schema: { tags: ['pools'], body: ref('PoolBody') } }, async (req, reply) => {
    const body = req.body as { name: string };
    const row: PoolRow = { kind: 'pool', id: core.newId(), name: body.name, origin: 'api', revision: '', tenantId: tenantFor(req.principal) };
    const s = write(core, (snap, rev) => planCreate(snap, row, rev));
    return reply.status(201).send(toApi(getRow(s, 'pool', row.id)!));
  });
  app.get('/pools', { config: { permission: 'pools:read' }, schema: { tags: ['pools'] } }, async (req) =>
    listVisible<PoolRow>(core.holder.current, req.principal, 'pool').map(toApi));
  app.get('/pools/:id', { config: { permission: 'pools:read' }, schema: { tags: ['pools'], params: idParams } }, async (req) =>
    toApi(requireRow(core.holder.current, req.principal, 'pool', (req.params as { id: string }).id)));
  app.put('/pools/:id', { config: { permission: 'pools:write' }, schema: { tags: ['pools'], params: idParams, body: ref('PoolBody') } }, async (req) => {
    const { id } = req.params as { id: string };
    const cur = requireRow<PoolRow>(core.holder.current, req.principal, 'pool', id);
    const s = write(core, (snap, rev) => planUpdate(snap, cur, { ...cur, name: (req.body as { name: string }).name }, rev));
    return toApi(getRow(s, 'pool', id)!);
  });
  app.delete('/pools/:id', { config: { permission: 'pools:write' }, schema: { tags: ['pools'], params: idParams } }, async (req, reply) => {
    const cur = requireRow(core.holder.current, req.principal, 'pool', (req.params as { id: string }).id);
    write(core, (snap, rev) => planDelete(snap, cur, rev));
    return reply.status(204).send();
  });
};
