import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Core } from '../app.js';
import { toApi } from '../../core/model/public.js';
import { assertApiWritable, planCreate, planDelete, planUpdate } from '../../core/plan/delta.js';
import { getRow } from '../../core/snapshot/snapshot.js';
import { badRequest } from '../errors.js';
import { nameRefusalError, nameRules } from '../tenancy/names.js';
import { listVisible, requireRow, tenantFor } from '../tenancy/visibility.js';
import { writeUnique } from '../ports/unique-names.js';
import { apiRef, errorResponses, idParams, noContent, type IdParams } from '../api/schemas.js';
import { checkRedirectHost } from './ownership.js';
import { REDIRECT_KIND, redirectFields, redirectProblems, type RedirectFields, type RedirectRow } from './rules.js';
import type { RedirectBody } from './route-types.js';

const redirect = apiRef('redirects', 'Redirect');
const body = apiRef('redirects', 'RedirectBody');
const tags = ['redirects'];

/** Row fields of a body, or 400 naming the field; 403 or 409 when the caller may not use the host. */
function checkedFields(core: Core, req: FastifyRequest, b: RedirectBody, tenant: string, selfId?: string): RedirectFields {
  const f = redirectFields(b);
  const problems = redirectProblems(f);
  if (problems.length > 0) throw badRequest(problems.map((p) => `${p.field}: ${p.rule}`).join('; '));
  const v = checkRedirectHost(nameRules(core.config), core.holder.current, { host: f.host, tenant, principalTenant: req.principal.tenantId, selfId });
  if (!v.ok) throw nameRefusalError(v);
  return f;
}

/**
 * /redirects (docs/redirects.md): a tenant's HTTP redirect rules. Each write is a one-row plan
 * through `core.apply` (a host reserved first in a cluster, docs/cluster.md "Unique names"), so the listener answers the new rule at once and config sync replicates
 * it; a git-owned rule answers 409 naming its manifest.
 */
export const redirectRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.get('/redirects', {
    config: { permission: 'redirects:read' },
    schema: { operationId: 'listRedirects', summary: 'List the redirect rules', tags, response: { 200: { description: "the caller's rules", type: 'array', items: redirect }, ...errorResponses() } },
  }, async (req) => listVisible<RedirectRow>(core.holder.current, req.principal, REDIRECT_KIND).map(toApi));
  app.post<{ Body: RedirectBody }>('/redirects', {
    config: { permission: 'redirects:write' },
    schema: {
      operationId: 'createRedirect', summary: 'Create a redirect rule, effective without restart', tags, body,
      response: { 201: { description: 'the new rule (code 302 and preservePath true unless sent)', ...redirect }, ...errorResponses(400, 409) },
    },
  }, async (req, reply) => {
    const tenant = tenantFor(req.principal);
    const row: RedirectRow = { kind: 'redirect', id: core.newId(), ...checkedFields(core, req, req.body, tenant), origin: 'api', revision: '', tenantId: tenant };
    const s = await writeUnique(core, (snap, rev) => planCreate(snap, row, rev));
    return reply.status(201).send(toApi(getRow<RedirectRow>(s, REDIRECT_KIND, row.id)!));
  });
  app.get<{ Params: IdParams }>('/redirects/:id', {
    config: { permission: 'redirects:read' },
    schema: { operationId: 'getRedirect', summary: 'Read a redirect rule', tags, params: idParams, response: { 200: { description: 'the rule', ...redirect }, ...errorResponses(400, 404) } },
  }, async (req) => toApi(requireRow(core.holder.current, req.principal, REDIRECT_KIND, req.params.id, 'redirect rule')));
  app.put<{ Body: RedirectBody; Params: IdParams }>('/redirects/:id', {
    config: { permission: 'redirects:write' },
    schema: { operationId: 'updateRedirect', summary: 'Replace a redirect rule', tags, params: idParams, body, response: { 200: { description: 'the rule', ...redirect }, ...errorResponses(400, 404, 409) } },
  }, async (req) => {
    const cur = requireRow<RedirectRow>(core.holder.current, req.principal, REDIRECT_KIND, req.params.id, 'redirect rule');
    assertApiWritable(cur);
    const f = checkedFields(core, req, req.body, cur.tenantId, cur.id);
    const s = await writeUnique(core, (snap, rev) => planUpdate(snap, cur, { ...cur, ...f }, rev));
    return toApi(getRow<RedirectRow>(s, REDIRECT_KIND, cur.id)!);
  });
  app.delete<{ Params: IdParams }>('/redirects/:id', {
    config: { permission: 'redirects:write' },
    schema: { operationId: 'deleteRedirect', summary: 'Delete a redirect rule', tags, params: idParams, response: { ...noContent('deleted; its host answers 404'), ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    const cur = requireRow(core.holder.current, req.principal, REDIRECT_KIND, req.params.id, 'redirect rule');
    core.apply(planDelete(core.holder.current, cur, core.apiRevision()));
    return reply.status(204).send();
  });
};
