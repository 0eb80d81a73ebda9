import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { GeoRuleRow, PoolRow } from '../../model/types.js';
import { toApi } from '../../model/public.js';
import { geoRuleFields } from '../../model/normalize.js';
import { planCreate, planDelete } from '../../../controller/plan/delta.js';
import { childrenOf, getRow } from '../../snapshot/snapshot.js';
import { requireRow } from '../../tenancy/visibility.js';
import { write } from '../write.js';
import { idParams, ref } from '../../api/schemas.js';

/** Geo rules (CIDR → endpoint) of a pool, used by the map-file algorithm. */
export const geoRuleRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.post('/pools/:id/georules', { config: { permission: 'pools:write' }, schema: { tags: ['georules'], params: idParams, body: ref('GeoRuleBody') } }, async (req, reply) => {
    const pool = requireRow<PoolRow>(core.holder.current, req.principal, 'pool', (req.params as { id: string }).id);
    const row: GeoRuleRow = { kind: 'georule', id: core.newId(), poolId: pool.id, ...geoRuleFields(req.body as Record<string, unknown>), origin: 'api', revision: '', tenantId: pool.tenantId };
    const s = write(core, (snap, rev) => planCreate(snap, row, rev));
    return reply.status(201).send(toApi(getRow(s, 'georule', row.id)!));
  });
  app.get('/pools/:id/georules', { config: { permission: 'pools:read' }, schema: { tags: ['georules'], params: idParams } }, async (req) => {
    const pool = requireRow(core.holder.current, req.principal, 'pool', (req.params as { id: string }).id);
    return childrenOf(core.holder.current, pool.id, 'georule').map(toApi);
  });
  app.delete('/georules/:id', { config: { permission: 'pools:write' }, schema: { tags: ['georules'], params: idParams } }, async (req, reply) => {
    const cur = requireRow(core.holder.current, req.principal, 'georule', (req.params as { id: string }).id, 'geo rule');
    write(core, (snap, rev) => planDelete(snap, cur, rev));
    return reply.status(204).send();
  });
};
