import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Core } from '../../app.js';
import type { ServiceRow } from '../../../core/model/types.js';
import { toApi } from '../../../core/model/public.js';
import { serviceFields } from '../../../core/model/normalize.js';
import { planCreate, planDelete, planUpdate } from '../../../core/plan/delta.js';
import { getRow, rowsOf } from '../../../core/snapshot/snapshot.js';
import { badRequest } from '../../errors.js';
import { checkNameClaim, nameRefusalError, nameRules } from '../../tenancy/names.js';
import { listVisible, requireRow, tenantFor, visibleTo } from '../../tenancy/visibility.js';
import { write, writeReserved } from '../write.js';
import { foreignRedirectClaims } from '../../redirect/port.js';
import { STATIC_POOL_ID, staticPoolOf } from '../../config/static-pool.js';
import { apiRef, errorResponses, idParams, noContent, ref, type IdParams } from '../../api/schemas.js';
import type { ServiceBody } from './types.js';

const service = apiRef('resources', 'Service');
const tags = ['services'];

/**
 * Validates what the schema cannot: the pool exists (and is the caller's), and the caller may use
 * the domain (runtime/tenancy/names.ts: reserved names, delegations, one service per name, first
 * come across tenants, other tenants' redirect hosts included; no public suffix) for a row of `tenant`. Throws 400, 403 or 409; messages to a tenant never name another tenant.
 */
function checkService(core: Core, req: FastifyRequest, f: ReturnType<typeof serviceFields>, tenant: string, selfId?: string): void {
  const statics = staticPoolOf(core.config);
  if (f.poolId === STATIC_POOL_ID && statics && visibleTo(req.principal, statics.pool)) {
    // DNS serves the static pool for dns.domain only (docs/api.md "The static pool")
    throw badRequest(`poolId: pool ${STATIC_POOL_ID} is the config file's loadbalancer.endpoints, served for dns.domain only; a service cannot use it`);
  }
  if (f.poolId !== null) {
    const pool = getRow(core.holder.current, 'pool', f.poolId);
    if (!pool || (req.principal.tenantId !== null && pool.tenantId !== req.principal.tenantId)) throw badRequest(`poolId: pool ${f.poolId} does not exist`);
  }
  const claim = { name: f.domain, tenant, principalTenant: req.principal.tenantId, selfId };
  // other tenants' redirect hosts are names too (docs/redirects.md "Names"); the tenant's own may share the name
  const named = [...rowsOf<ServiceRow>(core.holder.current, 'service').values(), ...foreignRedirectClaims(core.holder.current, tenant)];
  const v = checkNameClaim(nameRules(core.config), claim, named);
  if (!v.ok) throw nameRefusalError(v);
}

/** Services: bind a DNS name to a pool and an algorithm. */
export const serviceRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.post<{ Body: ServiceBody }>('/services', {
    config: { permission: 'pools:write' },
    schema: {
      operationId: 'createService', summary: 'Create a service', tags, body: ref('ServiceBody'),
      response: { 201: { description: 'the new service (algorithm round-robin, ttl 60 unless sent)', ...service }, ...errorResponses(400, 409) },
    },
  }, async (req, reply) => {
    const f = serviceFields(req.body);
    checkService(core, req, f, tenantFor(req.principal));
    const row: ServiceRow = { kind: 'service', id: core.newId(), ...f, origin: 'api', revision: '', tenantId: tenantFor(req.principal) };
    const s = await writeReserved(core, (snap, rev) => planCreate(snap, row, rev));
    return reply.status(201).send(toApi(getRow(s, 'service', row.id)!));
  });
  app.get('/services', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'listServices', summary: 'List the services', tags, response: { 200: { description: "the caller's services", type: 'array', items: service }, ...errorResponses() } },
  }, async (req) => listVisible(core.holder.current, req.principal, 'service').map(toApi));
  app.get<{ Params: IdParams }>('/services/:id', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getService', summary: 'Read a service', tags, params: idParams, response: { 200: { description: 'the service', ...service }, ...errorResponses(400, 404) } },
  }, async (req) => toApi(requireRow(core.holder.current, req.principal, 'service', req.params.id)));
  app.put<{ Body: ServiceBody; Params: IdParams }>('/services/:id', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'updateService', summary: 'Replace a service', tags, params: idParams, body: ref('ServiceBody'), response: { 200: { description: 'the service', ...service }, ...errorResponses(400, 404, 409) } },
  }, async (req) => {
    const { id } = req.params;
    const cur = requireRow<ServiceRow>(core.holder.current, req.principal, 'service', id);
    const f = serviceFields(req.body);
    checkService(core, req, f, cur.tenantId, id);
    const s = await writeReserved(core, (snap, rev) => planUpdate(snap, cur, { ...cur, ...f }, rev));
    return toApi(getRow(s, 'service', id)!);
  });
  app.delete<{ Params: IdParams }>('/services/:id', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'deleteService', summary: 'Delete a service', tags, params: idParams, response: { ...noContent('deleted'), ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    const cur = requireRow(core.holder.current, req.principal, 'service', req.params.id);
    write(core, (snap, rev) => planDelete(snap, cur, rev));
    return reply.status(204).send();
  });
};
