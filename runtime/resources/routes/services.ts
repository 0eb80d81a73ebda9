import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Core } from '../../app.js';
import type { ServiceRow } from '../../model/types.js';
import { toApi } from '../../model/public.js';
import { serviceFields } from '../../model/normalize.js';
import { planCreate, planDelete, planUpdate } from '../../../controller/plan/delta.js';
import { getRow, rowsOf } from '../../snapshot/snapshot.js';
import { badRequest, conflict, forbidden } from '../../errors.js';
import { checkNameClaim, nameRules } from '../../tenancy/names.js';
import { listVisible, requireRow, tenantFor } from '../../tenancy/visibility.js';
import { write } from '../write.js';
import { idParams, ref } from '../../api/schemas.js';

/**
 * Validates what the schema cannot: the pool exists (and is the caller's), and the caller may use
 * the domain (runtime/tenancy/names.ts: reserved names, delegations, one service per name, first
 * come across tenants) for a row of `tenant`. Throws 400, 403 or 409; messages to a tenant never name another tenant.
 */
function checkService(core: Core, req: FastifyRequest, f: ReturnType<typeof serviceFields>, tenant: string, selfId?: string): void {
  if (f.poolId !== null) {
    const pool = getRow(core.holder.current, 'pool', f.poolId);
    if (!pool || (req.principal.tenantId !== null && pool.tenantId !== req.principal.tenantId)) throw badRequest(`poolId: pool ${f.poolId} does not exist`);
  }
  const claim = { name: f.domain, tenant, principalTenant: req.principal.tenantId, selfId };
  const v = checkNameClaim(nameRules(core.config), claim, rowsOf<ServiceRow>(core.holder.current, 'service').values());
  if (!v.ok) throw v.status === 403 ? forbidden(v.message) : conflict(v.message);
}

/** Services: bind a DNS name to a pool and an algorithm. */
export const serviceRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.post('/services', { config: { permission: 'pools:write' }, schema: { tags: ['services'], body: ref('ServiceBody') } }, async (req, reply) => {
    const f = serviceFields(req.body as Record<string, unknown>);
    checkService(core, req, f, tenantFor(req.principal));
    const row: ServiceRow = { kind: 'service', id: core.newId(), ...f, origin: 'api', revision: '', tenantId: tenantFor(req.principal) };
    const s = write(core, (snap, rev) => planCreate(snap, row, rev));
    return reply.status(201).send(toApi(getRow(s, 'service', row.id)!));
  });
  app.get('/services', { config: { permission: 'pools:read' }, schema: { tags: ['services'] } }, async (req) =>
    listVisible(core.holder.current, req.principal, 'service').map(toApi));
  app.get('/services/:id', { config: { permission: 'pools:read' }, schema: { tags: ['services'], params: idParams } }, async (req) =>
    toApi(requireRow(core.holder.current, req.principal, 'service', (req.params as { id: string }).id)));
  app.put('/services/:id', { config: { permission: 'pools:write' }, schema: { tags: ['services'], params: idParams, body: ref('ServiceBody') } }, async (req) => {
    const { id } = req.params as { id: string };
    const cur = requireRow<ServiceRow>(core.holder.current, req.principal, 'service', id);
    const f = serviceFields(req.body as Record<string, unknown>);
    checkService(core, req, f, cur.tenantId, id);
    const s = write(core, (snap, rev) => planUpdate(snap, cur, { ...cur, ...f }, rev));
    return toApi(getRow(s, 'service', id)!);
  });
  app.delete('/services/:id', { config: { permission: 'pools:write' }, schema: { tags: ['services'], params: idParams } }, async (req, reply) => {
    const cur = requireRow(core.holder.current, req.principal, 'service', (req.params as { id: string }).id);
    write(core, (snap, rev) => planDelete(snap, cur, rev));
    return reply.status(204).send();
  });
};
