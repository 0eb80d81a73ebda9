import type { FastifyInstance } from 'fastify';
import type { AuthServices } from '../services.js';
import { conflict, notFound } from '../../errors.js';
import { apiRef, errorResponses, noContent } from '../../api/schemas.js';
import type { ApiKeyCreateBody, ApiKeyParams, TenantCreateBody, TenantParams } from './types.js';

const tags = ['tenants'];
const auth = (name: string) => apiRef('auth', name);

/**
 * Tenants and their legacy API keys. Supra-tenant only (`tenants:read` / `tenants:write`, which no
 * role holds): a tenant_admin "cannot manage tenants" (gslb-config-auth.md §5.4). A new key is
 * returned once as `key`; only its SHA-256 is stored.
 */
export function tenantRoutes(svc: AuthServices) {
  return async (app: FastifyInstance) => {
    app.get('/tenants', {
      config: { permission: 'tenants:read' },
      schema: { operationId: 'listTenants', summary: 'List the tenants', tags, response: { 200: { description: 'every tenant, `default` included', ...auth('TenantList') }, ...errorResponses() } },
    }, async () => svc.tenants.list());

    app.post<{ Body: TenantCreateBody }>('/tenants', {
      config: { permission: 'tenants:write' },
      schema: {
        operationId: 'createTenant', summary: 'Create a tenant', tags, body: auth('TenantCreate'),
        response: { 201: { description: 'the new tenant', ...auth('Tenant') }, ...errorResponses(400, 409) },
      },
    }, async (req, reply) => {
      if (!svc.tenants.create(req.body.id, req.body.name ?? req.body.id)) throw conflict(`tenant ${req.body.id} already exists`);
      return reply.status(201).send(svc.tenants.list().find((t) => t.id === req.body.id));
    });

    app.get<{ Params: TenantParams }>('/tenants/:id/apikeys', {
      config: { permission: 'tenants:read' },
      schema: {
        operationId: 'listTenantApiKeys', summary: "List a tenant's API keys (never the keys themselves)", tags, params: auth('TenantParams'),
        response: { 200: { description: 'the keys, oldest first', ...auth('ApiKeyList') }, ...errorResponses(400, 404) },
      },
    }, async (req) => {
      if (!svc.tenants.exists(req.params.id)) throw notFound(`tenant ${req.params.id} not found`);
      return svc.tenants.listKeys(req.params.id);
    });

    app.post<{ Params: TenantParams; Body: ApiKeyCreateBody }>('/tenants/:id/apikeys', {
      config: { permission: 'tenants:write' },
      schema: {
        operationId: 'createTenantApiKey', summary: 'Make an API key for a tenant, returned once', tags, params: auth('TenantParams'), body: auth('ApiKeyCreate'),
        response: {
          201: { description: 'the new key with `key`, which is not stored and cannot be read again', headers: { 'cache-control': { type: 'string', description: '`no-store`' } }, ...auth('NewApiKey') },
          ...errorResponses(400, 404),
        },
      },
    }, async (req, reply) => {
      if (!svc.tenants.exists(req.params.id)) throw notFound(`tenant ${req.params.id} not found`);
      reply.header('cache-control', 'no-store');
      return reply.status(201).send(svc.tenants.createKey(req.params.id, req.body.name ?? ''));
    });

    app.delete<{ Params: ApiKeyParams }>('/tenants/:id/apikeys/:keyId', {
      config: { permission: 'tenants:write' },
      schema: {
        operationId: 'deleteTenantApiKey', summary: 'Delete a tenant API key', tags, params: auth('ApiKeyParams'),
        response: { ...noContent('deleted; the key no longer authenticates'), ...errorResponses(400, 404) },
      },
    }, async (req, reply) => {
      if (!svc.tenants.deleteKey(req.params.id, req.params.keyId)) throw notFound(`API key ${req.params.keyId} not found`);
      return reply.status(204).send();
    });
  };
}
