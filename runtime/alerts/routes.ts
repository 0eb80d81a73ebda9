import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../app.js';
import { toApi } from '../../core/model/public.js';
import { listVisible, requireRow, tenantFor } from '../tenancy/visibility.js';
import { apiRef, errorResponses, idParams, noContent, type IdParams } from '../api/schemas.js';
import type { RowTargetDeps } from './row-targets.js';
import { createAlertTarget, deleteAlertTarget, replaceAlertTarget, testAlertTarget } from './target-service.js';
import { ALERT_TARGET_KIND, type AlertTargetRow } from './target-row.js';
import type { AlertTargetBody } from './route-types.js';

const ref = (name: string) => apiRef('alerttargets', name);
const tags = ['alerts'];

/**
 * /alert-targets (docs/alerts.md "Alert targets as resources"): a tenant's alert subscriptions.
 * Each write is a one-row plan through `core.apply`, so the dispatcher uses the new target for the
 * next event and config sync replicates it; a git-owned target answers 409 naming its manifest.
 * Subscriptions carry secrets (by reference) and decide where a tenant's alerts go, so they are
 * settings: `settings:read` reads, `settings:write` writes and tests (tenant_admin).
 */
export const alertTargetRoutes = (core: Core, deps: RowTargetDeps): FastifyPluginAsync => async (app) => {
  const policy = deps.secrets;
  app.get('/alert-targets', {
    config: { permission: 'settings:read' },
    schema: { operationId: 'listAlertTargets', summary: 'List the alert targets', tags, response: { 200: { description: "the caller's alert targets", type: 'array', items: ref('AlertTarget') }, ...errorResponses() } },
  }, async (req) => listVisible<AlertTargetRow>(core.holder.current, req.principal, ALERT_TARGET_KIND).map(toApi));

  app.post<{ Body: AlertTargetBody }>('/alert-targets', {
    config: { permission: 'settings:write' },
    schema: {
      operationId: 'createAlertTarget', summary: 'Create an alert target, used from the next event', tags, body: ref('AlertTargetBody'),
      response: { 201: { description: 'the new target, defaults filled in', ...ref('AlertTarget') }, ...errorResponses(400, 409) },
    },
  }, async (req, reply) => reply.status(201).send(toApi(createAlertTarget(core, policy, tenantFor(req.principal), req.body))));

  app.get<{ Params: IdParams }>('/alert-targets/:id', {
    config: { permission: 'settings:read' },
    schema: { operationId: 'getAlertTarget', summary: 'Read an alert target', tags, params: idParams, response: { 200: { description: 'the target', ...ref('AlertTarget') }, ...errorResponses(400, 404) } },
  }, async (req) => toApi(requireRow(core.holder.current, req.principal, ALERT_TARGET_KIND, req.params.id, 'alert target')));

  app.put<{ Body: AlertTargetBody; Params: IdParams }>('/alert-targets/:id', {
    config: { permission: 'settings:write' },
    schema: {
      operationId: 'updateAlertTarget', summary: 'Replace an alert target', tags, params: idParams, body: ref('AlertTargetBody'),
      response: { 200: { description: 'the target', ...ref('AlertTarget') }, ...errorResponses(400, 404, 409) },
    },
  }, async (req) => toApi(replaceAlertTarget(core, policy, req.principal, req.params.id, req.body)));

  app.delete<{ Params: IdParams }>('/alert-targets/:id', {
    config: { permission: 'settings:write' },
    schema: { operationId: 'deleteAlertTarget', summary: 'Delete an alert target', tags, params: idParams, response: { ...noContent('deleted; events still queued for it are delivered'), ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    deleteAlertTarget(core, req.principal, req.params.id);
    return reply.status(204).send();
  });

  // 502 when the receiver refused or could not be reached: `{error}` carries its answer.
  app.post<{ Params: IdParams }>('/alert-targets/:id/test', {
    config: { permission: 'settings:write' },
    schema: {
      operationId: 'testAlertTarget', summary: 'Send a sample event to an alert target now', tags, params: idParams,
      response: { 200: { description: 'the receiver accepted the sample event', ...ref('AlertTargetTestResult') }, ...errorResponses(400, 404, 502) },
    },
  }, async (req, reply) => {
    const row = requireRow<AlertTargetRow>(core.holder.current, req.principal, ALERT_TARGET_KIND, req.params.id, 'alert target');
    try {
      const r = await testAlertTarget(row, deps);
      return { ok: true, type: row.type, durationMs: r.durationMs, event: r.event };
    } catch (err) {
      return reply.status(502).send({ error: `sample event not delivered: ${(err as Error).message}` });
    }
  });
};
