import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Core } from '../runtime/app.js';
import { badRequest, forbidden, unauthorized } from '../runtime/errors.js';
import { apiRef, errorResponses, ref } from '../runtime/api/schemas.js';
import type { GitOpsController } from './controller.js';
import { planFiles, withField } from './plan-files.js';
import { runRoutingCases, runRoutingCasesForPlan } from './routing/run.js';
import { Slicer } from '../core/apply/slicer.js';
import { parsePushEvent, verifyWebhookSignature } from './webhook.js';
import type { HistoryQuery, PlanBody, ReconcileBody } from './route-types.js';
import type { Provenance } from '../core/apply/provenance.js';

/** The provenance as the status shows it: every field but the wire form. */
const provenanceJson = ({ rdata: _rdata, ...p }: Provenance) => p;

const tags = ['gitops'];
const gitops = (name: string) => apiRef('gitops', name);
const NOT_CONFIGURED = 'gitops is not configured: set gitops.repoURL';

/**
 * /gitops: status, history, a reconcile trigger, a plan of manifests against the running state (for
 * `gslbctl diff`) and the push webhook (HMAC-verified, public). docs/gitops.md lists the bodies.
 */
export const gitopsRoutes = (core: Core, ctl: GitOpsController): FastifyPluginAsync => async (app) => {
  app.get('/gitops/status', {
    config: { permission: 'gitops:read' },
    schema: {
      operationId: 'getGitOpsStatus', summary: "The controller's condition and the recent refused revisions", tags,
      response: { 200: { description: 'the status with `recentRejections`', ...gitops('Status') }, ...errorResponses() },
    },
  }, async () => ({
    ...ctl.status(), provenance: provenanceJson(core.holder.provenance), canary: core.ports.canary?.status() ?? null, recentRejections: ctl.store.attempts(10),
  }));

  app.get<{ Querystring: HistoryQuery }>('/gitops/history', {
    config: { permission: 'gitops:read' },
    schema: {
      operationId: 'listGitOpsHistory', summary: 'The applied git revisions, newest first', tags, querystring: gitops('HistoryQuery'),
      response: { 200: { description: 'the revisions', ...gitops('RevisionList') }, ...errorResponses(400) },
    },
  }, async (req) => {
    const limit = Number(req.query.limit ?? 50);
    if (limit < 1 || limit > 1000) throw badRequest('limit must be between 1 and 1000');
    return ctl.store.history(limit);
  });

  app.post<{ Body: ReconcileBody }>('/gitops/reconcile', {
    config: { permission: 'gitops:write' },
    schema: {
      operationId: 'reconcileGitOps', summary: 'Fetch, verify and apply the head now; waits for the run', tags, body: gitops('ReconcileRequest'),
      // 400 also when gitops.repoURL is unset
      response: { 200: { description: 'the status after the run (a failed run is in the status, not an error)', ...gitops('Status') }, ...errorResponses(400) },
    },
  }, async (req) => {
    const run = ctl.trigger({ trigger: { kind: 'manual', receivedAt: Date.now() }, force: req.body.force === true });
    if (!run) throw badRequest(NOT_CONFIGURED);
    const { status } = await run;
    return { ...status, provenance: provenanceJson(core.holder.provenance), canary: core.ports.canary?.status() ?? null };
  });

  // a whole repo travels in this body: allow more than api.bodyLimit (authenticated callers only)
  app.post<{ Body: PlanBody }>('/gitops/plan', {
    bodyLimit: 64 * 1024 * 1024,
    config: { permission: 'gitops:read' },
    schema: {
      operationId: 'planGitOps', summary: 'Plan manifest files against the running state; applies nothing', tags, body: gitops('PlanRequest'),
      response: { 200: { description: 'the problems, or the plan as JSON and as a diff', ...gitops('PlanResult') }, ...errorResponses(400) },
    },
  }, async (req, reply) => {
    const { files, revision } = req.body;
    const r = await planFiles(core, ctl.offload, files, revision, false);
    // the routing tests run as the controller would run them: on this daemon's state and databases, in slices
    const opts = { config: core.config, geo: core.ports.dnsGeo, slicer: new Slicer() };
    const actual = core.holder.current;
    const routingTests = !r.valid ? null : r.plan && r.cases.length > 0 ? await runRoutingCasesForPlan(r.cases, actual, r.plan, opts) : await runRoutingCases([], actual, opts);
    // serialized already (by the offload worker when there is one): sent as it is
    return reply.type('application/json; charset=utf-8').send(withField(r.json, 'routingTests', routingTests));
  });

  await app.register(webhookRoute(core, ctl));
};

/** The webhook's body in the document: the push event as JSON, or in GitHub's form encoding. */
const pushEventBody = {
  content: {
    'application/json': { schema: gitops('PushEvent') },
    'application/x-www-form-urlencoded': { schema: gitops('PushEventForm') },
  },
};

/**
 * Every part of a webhook request passes schema validation: the body is a Buffer (the HMAC is over
 * the raw bytes) and is read only after the signature checks, so a forged request gets 401 before
 * anything about its body is said. The schemas document what the handler reads.
 */
const acceptAll = () => () => true;

/** The push webhook in its own scope: it needs the raw body for the HMAC. */
const webhookRoute = (core: Core, ctl: GitOpsController) => async (app: FastifyInstance) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 5 * 1024 * 1024 }, (_req, body, done) => done(null, body));
  app.post('/gitops/webhook', {
    config: { public: true },
    validatorCompiler: acceptAll,
    schema: {
      operationId: 'receiveGitPush', summary: "A forge's push event: starts a reconcile of gitops.branch", tags,
      description: 'Authenticated by the HMAC-SHA256 of the raw body, keyed with the secret that gitops.webhookSecretEnv names (docs/gitops.md "Push webhook"). Bodies up to 5 MiB.',
      headers: gitops('WebhookHeaders'),
      body: pushEventBody,
      response: {
        200: { description: 'a ping, or a push to another ref: ignored', ...gitops('WebhookIgnored') },
        202: { description: 'a push to gitops.branch: the reconcile has started', ...gitops('WebhookAccepted') },
        400: { description: 'not a push event (no `ref` and `after`), or gitops.repoURL is unset', ...ref('Error') },
        401: { description: 'the signature is missing or wrong', ...ref('Error') },
        403: { description: 'the webhook is off: gitops.webhookSecretEnv names no set variable', ...ref('Error') },
      },
    },
  }, async (req, reply) => {
    const receivedAt = Date.now();
    const envName = core.config.gitops.webhookSecretEnv;
    const secret = envName ? core.env[envName] : undefined;
    if (!secret) throw forbidden('push webhook is disabled: gitops.webhookSecretEnv does not name a set environment variable');
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (!verifyWebhookSignature(raw, secret, req.headers)) throw unauthorized('webhook signature missing or invalid');
    const event = String(req.headers['x-github-event'] ?? req.headers['x-gitea-event'] ?? req.headers['x-forgejo-event'] ?? 'push');
    if (event === 'ping') return { accepted: false, reason: 'ping' };
    const push = parsePushEvent(raw, req.headers['content-type']);
    if (!push) throw badRequest('not a push event: the body needs "ref" and "after"');
    const branch = core.config.gitops.branch;
    if (push.ref !== `refs/heads/${branch}`) return { accepted: false, reason: `ref ${push.ref} is not refs/heads/${branch}` };
    const run = ctl.trigger({ trigger: { kind: 'webhook', receivedAt, after: push.after } });
    if (!run) throw badRequest(NOT_CONFIGURED);
    // answer at once; the reconcile continues (git servers time webhooks out after a few seconds)
    run.catch(() => undefined);
    return reply.status(202).send({ accepted: true, after: push.after });
  });
};
