import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { HealthCheckRow, PoolRow } from '../../model/types.js';
import { toApi } from '../../model/public.js';
import { healthCheckFields } from '../../model/normalize.js';
import { planCreate, planDelete, planUpdate } from '../../../controller/plan/delta.js';
import { childrenOf, getRow } from '../../snapshot/snapshot.js';
import { notFound } from '../../errors.js';
import { requireRow, write } from './access.js';
import { idParams, ref } from './schemas.js';

/** The one health check of a pool: upsert, read, delete. */
export const healthCheckRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  const current = (poolId: string) => childrenOf<HealthCheckRow>(core.holder.current, poolId, 'healthcheck')[0];
  app.put('/pools/:id/healthcheck', { config: { permission: 'pools:write' }, schema: { tags: ['healthchecks'], params: idParams, body: ref('HealthCheckBody') } }, async (req) => {
    const pool = requireRow<PoolRow>(core.holder.current, req, 'pool', (req.params as { id: string }).id);
    const fields = healthCheckFields((req.body ?? {}) as Record<string, unknown>);
    const cur = current(pool.id);
    const id = cur?.id ?? core.newId();
    const row: HealthCheckRow = { kind: 'healthcheck', id, poolId: pool.id, ...fields, origin: 'api', revision: '', tenantId: pool.tenantId };
    const s = write(core, (snap, rev) => (cur ? planUpdate(snap, cur, row, rev) : planCreate(snap, row, rev)));
    return toApi(getRow(s, 'healthcheck', id)!);
  });
  app.get('/pools/:id/healthcheck', { config: { permission: 'pools:read' }, schema: { tags: ['healthchecks'], params: idParams } }, async (req) => {
    const pool = requireRow(core.holder.current, req, 'pool', (req.params as { id: string }).id);
    const hc = current(pool.id);
    if (!hc) throw notFound(`pool ${pool.id} has no health check configured`);
    return toApi(hc);
  });
  app.delete('/pools/:id/healthcheck', { config: { permission: 'pools:write' }, schema: { tags: ['healthchecks'], params: idParams } }, async (req, reply) => {
    const pool = requireRow(core.holder.current, req, 'pool', (req.params as { id: string }).id);
    const hc = current(pool.id);
    if (!hc) throw notFound(`pool ${pool.id} has no health check configured`);
    write(core, (snap, rev) => planDelete(snap, hc, rev));
    return reply.status(204).send();
  });
};
