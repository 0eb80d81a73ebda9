import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { GeoRuleRow } from '../../../core/model/types.js';
import { toApi } from '../../../core/model/public.js';
import { geoRuleFields } from '../../../core/model/normalize.js';
import { planCreate, planDelete } from '../../../core/plan/delta.js';
import { getRow } from '../../../core/snapshot/snapshot.js';
import { requireRow } from '../../tenancy/visibility.js';
import { findPool, findWritablePool, geoRulesOf } from '../pool-rows.js';
import { write } from '../write.js';
import { apiRef, errorResponses, idParams, noContent, ref, type IdParams } from '../../api/schemas.js';
import type { GeoRuleBody } from './types.js';

const geoRule = apiRef('resources', 'GeoRule');
const tags = ['georules'];

/** Geo rules (CIDR → endpoint) of a pool, used by the map-file algorithm. */
export const geoRuleRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.post<{ Body: GeoRuleBody; Params: IdParams }>('/pools/:id/georules', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'createGeoRule', summary: 'Add a geo rule to a pool', tags, params: idParams, body: ref('GeoRuleBody'), response: { 201: { description: 'the new rule', ...geoRule }, ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    const pool = findWritablePool(core, req.principal, req.params.id, 'add geo rules to');
    const row: GeoRuleRow = { kind: 'georule', id: core.newId(), poolId: pool.id, ...geoRuleFields(req.body), origin: 'api', revision: '', tenantId: pool.tenantId };
    const s = write(core, (snap, rev) => planCreate(snap, row, rev));
    return reply.status(201).send(toApi(getRow(s, 'georule', row.id)!));
  });
  app.get<{ Params: IdParams }>('/pools/:id/georules', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'listGeoRules', summary: 'List the geo rules of a pool', tags, params: idParams, response: { 200: { description: 'the rules in storage order', type: 'array', items: geoRule }, ...errorResponses(400, 404) } },
  }, async (req) => {
    const pool = findPool(core, req.principal, req.params.id);
    return geoRulesOf(core, pool.id).map(toApi);
  });
  app.delete<{ Params: IdParams }>('/georules/:id', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'deleteGeoRule', summary: 'Delete a geo rule', tags, params: idParams, response: { ...noContent('deleted'), ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    const cur = requireRow(core.holder.current, req.principal, 'georule', req.params.id, 'geo rule');
    write(core, (snap, rev) => planDelete(snap, cur, rev));
    return reply.status(204).send();
  });
};
