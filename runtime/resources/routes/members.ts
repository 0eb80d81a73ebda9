import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../app.js';
import type { MemberRow } from '../../../core/model/types.js';
import { toApi } from '../../../core/model/public.js';
import { memberCreateFields, memberUpdateFields } from '../../../core/model/normalize.js';
import { planCreate, planDelete, planUpdate } from '../../../core/plan/delta.js';
import { getRow } from '../../../core/snapshot/snapshot.js';
import { conflict } from '../../errors.js';
import { findMember, findPool, findWritableMember, findWritablePool, membersOf } from '../pool-rows.js';
import { write } from '../write.js';
import { apiRef, errorResponses, idParams, noContent, ref, type IdParams } from '../../api/schemas.js';
import type { MemberCreate, MemberUpdate } from './types.js';

const member = apiRef('resources', 'Member');
const tags = ['members'];

function assertUniqueEndpoint(core: Core, poolId: string, ip: string, port: number, selfId?: string): void {
  const dup = membersOf(core, poolId).find((m) => m.ipAddress === ip && m.port === port && m.id !== selfId);
  if (dup) throw conflict(`pool ${poolId} already has a member ${ip}:${port} (${dup.id})`);
}

/** Members of a pool: create under a pool, list, read, update, delete. */
export const memberRoutes = (core: Core): FastifyPluginAsync => async (app) => {
  app.post<{ Body: MemberCreate; Params: IdParams }>('/pools/:id/members', {
    config: { permission: 'pools:write' },
    schema: {
      operationId: 'createMember', summary: 'Add a member to a pool', tags, params: idParams, body: ref('MemberCreate'),
      response: { 201: { description: 'the new member (weight 1 when sent as 0 or less, enabled by default)', ...member }, ...errorResponses(400, 404, 409) },
    },
  }, async (req, reply) => {
    const pool = findWritablePool(core, req.principal, req.params.id, 'add members to');
    const f = memberCreateFields(req.body);
    assertUniqueEndpoint(core, pool.id, f.ipAddress, f.port);
    const row: MemberRow = { kind: 'member', id: core.newId(), poolId: pool.id, ...f, origin: 'api', revision: '', tenantId: pool.tenantId };
    const s = write(core, (snap, rev) => planCreate(snap, row, rev));
    return reply.status(201).send(toApi(getRow(s, 'member', row.id)!));
  });
  app.get<{ Params: IdParams }>('/pools/:id/members', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'listMembers', summary: 'List the members of a pool', tags, params: idParams, response: { 200: { description: 'the members in storage order', type: 'array', items: member }, ...errorResponses(400, 404) } },
  }, async (req) => {
    const pool = findPool(core, req.principal, req.params.id);
    return membersOf(core, pool.id).map(toApi);
  });
  app.get<{ Params: IdParams }>('/members/:id', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getMember', summary: 'Read a member', tags, params: idParams, response: { 200: { description: 'the member', ...member }, ...errorResponses(400, 404) } },
  }, async (req) => toApi(findMember(core, req.principal, req.params.id)));
  app.put<{ Body: MemberUpdate; Params: IdParams }>('/members/:id', {
    config: { permission: 'pools:write' },
    schema: {
      operationId: 'updateMember', summary: 'Change a member (only the fields sent)', tags, params: idParams, body: ref('MemberUpdate'),
      response: { 200: { description: 'the member', ...member }, ...errorResponses(400, 404, 409) },
    },
  }, async (req) => {
    const { id } = req.params;
    const cur = findWritableMember(core, req.principal, id);
    const next = memberUpdateFields(cur, req.body);
    if (next.ipAddress !== cur.ipAddress || next.port !== cur.port) assertUniqueEndpoint(core, cur.poolId, next.ipAddress, next.port, cur.id);
    const s = write(core, (snap, rev) => planUpdate(snap, cur, next, rev));
    return toApi(getRow(s, 'member', id)!);
  });
  app.delete<{ Params: IdParams }>('/members/:id', {
    config: { permission: 'pools:write' },
    schema: { operationId: 'deleteMember', summary: 'Delete a member', tags, params: idParams, response: { ...noContent('deleted'), ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    const cur = findWritableMember(core, req.principal, req.params.id, 'delete');
    write(core, (snap, rev) => planDelete(snap, cur, rev));
    return reply.status(204).send();
  });
};
