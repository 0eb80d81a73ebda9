import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { HealthCheckFields, HealthCheckRow, PoolRow } from '../../../core/model/types.js';
import type { Principal } from '../../ports/principal.js';
import { carriesScript, scriptPolicyOf, scriptRefusal, SCRIPTS_DISABLED, SCRIPTS_SYSTEM_ONLY } from '../../config/script-policy.js';
import { toApi } from '../../../core/model/public.js';
import { healthCheckFields } from '../../../core/model/normalize.js';
import { assertApiWritable, planCreate, planDelete, planUpdate } from '../../../core/plan/delta.js';
import { getRow } from '../../../core/snapshot/snapshot.js';
import { badRequest, forbidden, notFound } from '../../errors.js';
import { findPool, healthCheckOf } from '../pool-rows.js';
import { write } from '../write.js';
import { apiRef, errorResponses, idParams, noContent, ref, type IdParams } from '../../api/schemas.js';
import type { HealthCheckBody } from './types.js';

const healthCheck = apiRef('resources', 'HealthCheck');
const tags = ['healthchecks'];

/**
 * Refuses a check that carries a script unless this server allows scripts (403 for everybody when
 * `health.allowScripts` is false), the caller is supra-tenant (system key or dev mode; every
 * tenant principal, legacy keys included, gets 403) and a `scriptPath` resolves inside
 * `health.scriptDirs` (403 naming them; 400 when relative or unresolvable). docs/health.md.
 */
function assertScriptAllowed(core: Core, principal: Principal, fields: HealthCheckFields): void {
  if (!carriesScript(fields)) return;
  const policy = scriptPolicyOf(core.config.health);
  if (!policy.allow) throw forbidden(SCRIPTS_DISABLED);
  if (principal.tenantId !== null) throw forbidden(SCRIPTS_SYSTEM_ONLY);
  const refusal = scriptRefusal(fields, policy);
  if (refusal) throw refusal.status === 403 ? forbidden(refusal.reason) : badRequest(refusal.reason);
}

/**
 * The pool's check, or the pool itself when it has none, refused (409) when it belongs to the
 * config file: the static pool's check is the file's `health` block.
 */
function assertCheckWritable(pool: PoolRow, check: HealthCheckRow | undefined, action: string): void {
  if (pool.origin === 'config') assertApiWritable(check ?? pool, action);
}

/**
 * The one health check of a pool: upsert, read, delete. Script checks: {@link assertScriptAllowed}.
 * The static pool's check (the config file's `health` block) reads like any other and is read-only.
 */
export const healthCheckRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  const current = (poolId: string) => healthCheckOf(core, poolId);
  app.put<{ Body: HealthCheckBody; Params: IdParams }>('/pools/:id/healthcheck', {
    config: { permission: 'pools:write' },
    schema: {
      operationId: 'putHealthCheck', summary: "Create or replace a pool's health check", tags, params: idParams, body: ref('HealthCheckBody'),
      response: { 200: { description: 'the health check with every default applied', ...healthCheck }, ...errorResponses(400, 404, 409) },
    },
  }, async (req) => {
    const pool = findPool(core, req.principal, req.params.id);
    assertCheckWritable(pool, current(pool.id), 'change');
    const fields = healthCheckFields(req.body);
    assertScriptAllowed(core, req.principal, fields);
    const cur = current(pool.id);
    const id = cur?.id ?? core.newId();
    const row: HealthCheckRow = { kind: 'healthcheck', id, poolId: pool.id, ...fields, origin: 'api', revision: '', tenantId: pool.tenantId };
    const s = write(core, (snap, rev) => (cur ? planUpdate(snap, cur, row, rev) : planCreate(snap, row, rev)));
    return toApi(getRow(s, 'healthcheck', id)!);
  });
  app.get<{ Params: IdParams }>('/pools/:id/healthcheck', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getHealthCheck', summary: "Read a pool's health check", tags, params: idParams, response: { 200: { description: 'the health check', ...healthCheck }, ...errorResponses(400, 404) } },
  }, async (req) => {
    const pool = findPool(core, req.principal, req.params.id);
    const hc = current(pool.id);
    if (!hc) throw notFound(pool.origin === 'config' ? `pool ${pool.id} has no health check: health.enabled is false in the config file` : `pool ${pool.id} has no health check configured`);
    return toApi(hc);
  });
  app.delete<{ Params: IdParams }>('/pools/:id/healthcheck', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'deleteHealthCheck', summary: "Delete a pool's health check", tags, params: idParams, response: { ...noContent('deleted'), ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    const pool = findPool(core, req.principal, req.params.id);
    const hc = current(pool.id);
    assertCheckWritable(pool, hc, 'delete');
    if (!hc) throw notFound(`pool ${pool.id} has no health check configured`);
    write(core, (snap, rev) => planDelete(snap, hc, rev));
    return reply.status(204).send();
  });
};
