import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEFAULT_TENANT } from '../../../core/model/types.js';
import { conflict, forbidden, notFound } from '../../errors.js';
import { apiRef, errorResponses, idParams, noContent } from '../../api/schemas.js';
import type { FormKeyStore } from './store.js';
import type { FormKeyCreateBody, FormKeyParams, TenantQuery } from './route-types.js';

const tags = ['apikeys'];
const keys = (name: string) => apiRef('formkeys', name);

/**
 * The workspace a request acts on: a tenant caller's own (naming another is 403); a supra-tenant
 * caller (system key, dev mode) names one with `?tenant=`, else `default` (a key by id is found in
 * any workspace).
 */
function workspaceOf(req: FastifyRequest<{ Querystring: TenantQuery }>): string {
  const own = req.principal.tenantId;
  const asked = req.query.tenant;
  if (own === null) return asked ?? DEFAULT_TENANT;
  if (asked !== undefined && asked !== own) throw forbidden(`this credential belongs to workspace ${own}`);
  return own;
}

/**
 * /api/v1/apikeys: a workspace's form-service API keys (docs/forms.md). A tenant_admin makes and
 * deletes them (`apikeys:write`); tenant_admin and operator list them (`apikeys:read`). A new key
 * is returned once, with `Cache-Control: no-store`. A key declared in git is deleted in git (409).
 */
export const formKeyRoutes = (store: FormKeyStore) => async (app: FastifyInstance) => {
  app.get<{ Querystring: TenantQuery }>('/apikeys', {
    config: { permission: 'apikeys:read' },
    schema: {
      operationId: 'listFormKeys', summary: "List the workspace's form-service API keys (never the keys themselves)", tags, querystring: keys('TenantQuery'),
      response: { 200: { description: 'the keys, oldest first, with their last use (on any node of a cluster)', ...keys('FormKeyList') }, ...errorResponses(400) },
    },
  }, async (req) => store.list(workspaceOf(req)));

  app.post<{ Querystring: TenantQuery; Body: FormKeyCreateBody }>('/apikeys', {
    config: { permission: 'apikeys:write' },
    schema: {
      operationId: 'createFormKey', summary: 'Make a form-service API key, returned once', tags, querystring: keys('TenantQuery'), body: keys('FormKeyCreate'),
      response: {
        201: { description: 'the new key with `key`, which is not stored and cannot be read again', headers: { 'cache-control': { type: 'string', description: '`no-store`' } }, ...keys('NewFormKey') },
        ...errorResponses(400, 409),
      },
    },
  }, async (req, reply) => {
    const created = await store.createReserved(workspaceOf(req), req.body);
    reply.header('cache-control', 'no-store');
    return reply.status(201).send(created);
  });

  app.delete<{ Querystring: TenantQuery; Params: FormKeyParams }>('/apikeys/:id', {
    config: { permission: 'apikeys:write' },
    schema: {
      operationId: 'deleteFormKey', summary: 'Delete a form-service API key', tags, querystring: keys('TenantQuery'), params: idParams,
      response: { ...noContent('deleted; the key no longer authenticates'), ...errorResponses(400, 404, 409) },
    },
  }, async (req, reply) => {
    // a supra-tenant caller naming no workspace reaches the key in whichever workspace holds it
    const anyWorkspace = req.principal.tenantId === null && req.query.tenant === undefined;
    const row = anyWorkspace ? store.find(req.params.id) : store.get(workspaceOf(req), req.params.id);
    if (!row) throw notFound(`API key ${req.params.id} not found`);
    if (row.origin === 'git') throw conflict(`API key "${row.name}" is declared in git (${String(row.source ?? 'the config repo')}); delete it there`);
    store.delete(row.tenantId, row.id);
    return reply.status(204).send();
  });
};
