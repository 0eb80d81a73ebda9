import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { PoolRow } from '../../../core/model/types.js';
import { toApi } from '../../../core/model/public.js';
import { planCreate, planDelete, planUpdate } from '../../../core/plan/delta.js';
import { getRow } from '../../../core/snapshot/snapshot.js';
import { tenantFor } from '../../tenancy/visibility.js';
import { findPool, findWritablePool, visiblePools } from '../pool-rows.js';
import { write } from '../write.js';
import { apiRef, errorResponses, idParams, noContent, ref, type IdParams } from '../../api/schemas.js';
import type { PoolBody } from './types.js';

const pool = apiRef('resources', 'Pool');
const tags = ['pools'];

/**
 * /pools: create, list, read, rename, delete (cascades to members, health check and geo rules).
 * Lists and reads include the config file's static pool; renaming or deleting it answers 409.
 */
export const poolRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.post<{ Body: PoolBody }>('/pools', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'createPool', summary: 'Create a pool', tags, body: ref('PoolBody'), response: { 201: { description: 'the new pool', ...pool }, ...errorResponses(400, 409) } },
  }, async (req, reply) => {
    const row: PoolRow = { kind: 'pool', id: core.newId(), name: req.body.name, origin: 'api', revision: '', tenantId: tenantFor(req.principal) };
    const s = write(core, (snap, rev) => planCreate(snap, row, rev));
    return reply.status(201).send(toApi(getRow(s, 'pool', row.id)!));
  });
  app.get('/pools', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'listPools', summary: 'List the pools', tags, response: { 200: { description: "the caller's pools (the config file's static pool first, when configured and visible)", type: 'array', items: pool }, ...errorResponses() } },
  }, async (req) => visiblePools(core, req.principal).map(toApi));
  app.get<{ Params: IdParams }>('/pools/:id', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getPool', summary: 'Read a pool', tags, params: idParams, response: { 200: { description: 'the pool', ...pool }, ...errorResponses(400, 404) } },
  }, async (req) => toApi(findPool(core, req.principal, req.params.id)));
  app.put<{ Body: PoolBody; Params: IdParams }>('/pools/:id', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'updatePool', summary: 'Rename a pool', tags, params: idParams, body: ref('PoolBody'), response: { 200: { description: 'the pool', ...pool }, ...errorResponses(400, 404, 409) } },
  }, async (req) => {
    const { id } = req.params;
    const cur = findWritablePool(core, req.principal, id);
    const s = write(core, (snap, rev) => planUpdate(snap, cur, { ...cur, name: req.body.name }, rev));
    return toApi(getRow(s, 'pool', id)!);
  });
  app.delete<{ Params: IdParams }>('/pools/:id', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'deletePool', summary: 'Delete a pool with its members, health check and geo rules', tags, params: idParams, response: { ...noContent('deleted; services that pointed at the pool now have poolId null'), ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    const cur = findWritablePool(core, req.principal, req.params.id, 'delete');
    write(core, (snap, rev) => planDelete(snap, cur, rev));
    return reply.status(204).send();
  });
};
