import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../app.js';
import { toApi } from '../../core/model/public.js';
import { listVisible, requireRow, tenantFor } from '../tenancy/visibility.js';
import { apiRef, errorResponses, idParams, noContent, type IdParams } from '../api/schemas.js';
import { createTxt, deleteTxt, replaceTxt } from './service.js';
import type { TxtRecordBody } from './route-types.js';

const txt = (name: string) => apiRef('txt', name);
const tags = ['dns'];

/**
 * /api/v1/dns/txt (docs/dns.md "TXT records"): a tenant's TXT records, each write a Plan through
 * the one write path (so they replicate and are served at once). Records are DNS resources of the
 * tenant like services: `pools:read` reads, `pools:write` writes.
 */
export const txtRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.get('/dns/txt', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'listTxtRecords', summary: 'List the TXT records', tags, response: { 200: { description: "the caller's TXT records", type: 'array', items: txt('TxtRecord') }, ...errorResponses() } },
  }, async (req) => listVisible(core.holder.current, req.principal, 'txtrecord').map(toApi));

  app.post<{ Body: TxtRecordBody }>('/dns/txt', {
    config: { permission: 'pools:write' },
    schema: {
      operationId: 'createTxtRecord', summary: 'Create a TXT record set at a name', tags, body: txt('TxtRecordBody'),
      response: { 201: { description: 'the new record set (ttl 300 unless sent), served at once', ...txt('TxtRecord') }, ...errorResponses(400, 409) },
    },
  }, async (req, reply) => reply.status(201).send(toApi(createTxt(core, req.principal, tenantFor(req.principal), req.body))));

  app.get<{ Params: IdParams }>('/dns/txt/:id', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getTxtRecord', summary: 'Read a TXT record set', tags, params: idParams, response: { 200: { description: 'the record set', ...txt('TxtRecord') }, ...errorResponses(400, 404) } },
  }, async (req) => toApi(requireRow(core.holder.current, req.principal, 'txtrecord', req.params.id, 'TXT record')));

  app.put<{ Body: TxtRecordBody; Params: IdParams }>('/dns/txt/:id', {
    config: { permission: 'pools:write' },
    schema: {
      operationId: 'updateTxtRecord', summary: 'Replace a TXT record set', tags, params: idParams, body: txt('TxtRecordBody'),
      response: { 200: { description: 'the record set', ...txt('TxtRecord') }, ...errorResponses(400, 404, 409) },
    },
  }, async (req) => toApi(replaceTxt(core, req.principal, req.params.id, req.body)));

  app.delete<{ Params: IdParams }>('/dns/txt/:id', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'deleteTxtRecord', summary: 'Delete a TXT record set', tags, params: idParams, response: { ...noContent('deleted'), ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    deleteTxt(core, req.principal, req.params.id);
    return reply.status(204).send();
  });
};
