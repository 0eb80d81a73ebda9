import type { FastifyInstance } from 'fastify';
import type { AuthServices } from '../services.js';
import { conflict, notFound } from '../../errors.js';

const tenantIdParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['id'] } as const;

/**
 * Tenants and their legacy API keys. Supra-tenant only (`tenants:read` / `tenants:write`, which no
 * role holds): a tenant_admin "cannot manage tenants" (gslb-config-auth.md §5.4). A new key is
 * returned once as `key`; only its SHA-256 is stored.
 */
export function tenantRoutes(svc: AuthServices) {
  return async (app: FastifyInstance) => {
    app.get('/tenants', { config: { permission: 'tenants:read' }, schema: { tags: ['tenants'] } }, async () => svc.tenants.list());

    app.post<{ Body: { id: string; name?: string } }>('/tenants', {
      config: { permission: 'tenants:write' },
      schema: { tags: ['tenants'], body: { type: 'object', additionalProperties: false, properties: { id: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }, name: { type: 'string', maxLength: 200, format: 'printable' } }, required: ['id'] } },
    }, async (req, reply) => {
      if (!svc.tenants.create(req.body.id, req.body.name ?? req.body.id)) throw conflict(`tenant ${req.body.id} already exists`);
      return reply.status(201).send(svc.tenants.list().find((t) => t.id === req.body.id));
    });

    app.get<{ Params: { id: string } }>('/tenants/:id/apikeys', { config: { permission: 'tenants:read' }, schema: { tags: ['tenants'], params: tenantIdParams } }, async (req) => {
      if (!svc.tenants.exists(req.params.id)) throw notFound(`tenant ${req.params.id} not found`);
      return svc.tenants.listKeys(req.params.id);
    });

    app.post<{ Params: { id: string }; Body: { name?: string } }>('/tenants/:id/apikeys', {
      config: { permission: 'tenants:write' },
      schema: { tags: ['tenants'], params: tenantIdParams, body: { type: 'object', additionalProperties: false, properties: { name: { type: 'string', maxLength: 200, format: 'printable' } } } },
    }, async (req, reply) => {
      if (!svc.tenants.exists(req.params.id)) throw notFound(`tenant ${req.params.id} not found`);
      reply.header('cache-control', 'no-store');
      return reply.status(201).send(svc.tenants.createKey(req.params.id, req.body?.name ?? ''));
    });

    app.delete<{ Params: { id: string; keyId: string } }>('/tenants/:id/apikeys/:keyId', {
      config: { permission: 'tenants:write' },
      schema: { tags: ['tenants'], params: { type: 'object', properties: { id: { type: 'string' }, keyId: { type: 'string' } }, required: ['id', 'keyId'] } },
    }, async (req, reply) => {
      if (!svc.tenants.deleteKey(req.params.id, req.params.keyId)) throw notFound(`API key ${req.params.keyId} not found`);
      return reply.status(204).send();
    });
  };
}
