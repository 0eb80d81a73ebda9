import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { IdParams } from '../../api/schemas.js';
import { isoOrNull } from '../forms/views.js';
import type { DomainCreate, DomainRef, PageQuery } from '../forms/routes/types.js';
import { paginate, parsePage } from '../public/list.js';
import { formRoute } from '../public/routes/docs.js';
import { callerOf } from '../public/routes/server.js';
import type { FormDomainRow } from './rows.js';
import type { DomainService } from './service.js';

/**
 * The workspace's custom domains (forms-api.md §4 `/domain*`; docs/forms.md "Domains"). Domains
 * belong to the workspace, not to a form: a single-form key may read them but not change them.
 */
export const domainRoutes = (svc: DomainService): FastifyPluginAsync => async (app) => {
  // without a configured target, the records point at the host the request came to (req.hostname: no port)
  const view = (d: FormDomainRow, req: FastifyRequest) => ({
    id: d.id, domain: d.hostname, status: d.status, records: svc.records(d, req.hostname), verified_at: isoOrNull(d.verifiedAt), created_at: new Date(d.createdAt).toISOString(),
  });

  app.get<{ Querystring: PageQuery }>('/domain', formRoute({
    operationId: 'get_domain', summary: "The workspace's custom domains", scope: 'forms:read', querystring: 'PageQuery',
    success: { status: 200, description: 'a page of domains with the records to create', schema: 'DomainList' },
  }), async (req) => {
    const page = paginate(svc.list(callerOf(req).tenantId), parsePage(req.query));
    return { ...page, data: page.data.map((x) => view(x, req)) };
  });

  app.post<{ Body: DomainCreate }>('/domain', formRoute({
    operationId: 'post_domain', summary: 'Register a custom domain', scope: 'forms:write', form: 'workspace', body: 'DomainCreate', errors: [409],
    description: 'Answers the DNS records to create: a TXT record proving control, and the record pointing the host at this service: a CNAME to forms.domains.target, the host of api.publicURL or, with neither, the host this request came to; an A or AAAA record to forms.domains.address when set (or when that host is an IP address). Needs a plan with customDomains (403); a host name belongs to one workspace (409).',
    success: { status: 201, description: 'the pending domain and its records', schema: 'Domain' },
  }), async (req, reply) => reply.status(201).send(view(await svc.register(callerOf(req).tenantId, req.body.domain), req)));

  app.delete<{ Params: IdParams; Body: DomainRef }>('/domain/:id', formRoute({
    operationId: 'delete_domain_id', summary: 'Delete a custom domain', scope: 'forms:write', form: 'workspace', id: true, body: 'DomainRef',
    success: { status: 200, description: 'what was deleted', schema: 'DomainDeleted' },
  }), async (req) => {
    const d = svc.require(callerOf(req).tenantId, req.params.id);
    svc.remove(d);
    return { deleted: true as const, domain_id: d.id };
  });

  app.post<{ Params: IdParams; Body: DomainRef }>('/domain/:id/verify', formRoute({
    operationId: 'post_domain_id_verify', summary: 'Verify a custom domain by its TXT record', scope: 'forms:write', form: 'workspace', id: true, body: 'DomainRef', errors: [409],
    description: 'Looks up the TXT record through the configured resolver and activates the domain. When the record is missing or holds another value: 409 naming the record expected and what was found.',
    success: { status: 200, description: 'the active domain', schema: 'Domain' },
  }), async (req) => view(await svc.verify(svc.require(callerOf(req).tenantId, req.params.id)), req));
};
