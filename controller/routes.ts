import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Core } from '../runtime/app.js';
import { badRequest, forbidden, unauthorized } from '../runtime/errors.js';
import type { GitOpsController } from './controller.js';
import { dryRun } from './dry-run.js';
import { validationEnv } from './validate/names.js';
import { planToJson, renderPlanText } from './render/plan.js';
import { parsePushEvent, verifyWebhookSignature } from './webhook.js';

const planBody = {
  type: 'object', additionalProperties: false, required: ['files'],
  properties: {
    files: {
      type: 'array', maxItems: 100000,
      items: { type: 'object', additionalProperties: false, required: ['path', 'text'], properties: { path: { type: 'string', minLength: 1 }, text: { type: 'string' } } },
    },
    revision: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;

/**
 * /gitops: status, history, a reconcile trigger, a plan of manifests against the running state (for
 * `gslbctl diff`) and the push webhook (HMAC-verified, public). docs/gitops.md lists the bodies.
 */
export const gitopsRoutes = (core: Core, ctl: GitOpsController): FastifyPluginAsync => async (app) => {
  app.get('/gitops/status', { config: { permission: 'gitops:read' }, schema: { tags: ['gitops'] } }, async () => ({
    ...ctl.status(), recentRejections: ctl.store.attempts(10),
  }));

  app.get('/gitops/history', {
    config: { permission: 'gitops:read' },
    schema: { tags: ['gitops'], querystring: { type: 'object', properties: { limit: { type: 'string', pattern: '^[0-9]{1,4}$' } } } },
  }, async (req) => {
    const limit = Number((req.query as { limit?: string }).limit ?? 50);
    if (limit < 1 || limit > 1000) throw badRequest('limit must be between 1 and 1000');
    return ctl.store.history(limit);
  });

  app.post('/gitops/reconcile', {
    config: { permission: 'gitops:write' },
    schema: { tags: ['gitops'], body: { type: 'object', additionalProperties: false, properties: { force: { type: 'boolean' } } } },
  }, async (req) => {
    const force = Boolean((req.body as { force?: boolean } | undefined)?.force);
    const run = ctl.trigger({ trigger: { kind: 'manual', receivedAt: Date.now() }, force });
    if (!run) throw badRequest('gitops is not configured: set gitops.repoURL');
    const { status } = await run;
    return status;
  });

  // a whole repo travels in this body: allow more than api.bodyLimit (authenticated callers only)
  app.post('/gitops/plan', { bodyLimit: 64 * 1024 * 1024, config: { permission: 'gitops:read' }, schema: { tags: ['gitops'], body: planBody } }, async (req) => {
    const body = req.body as { files: { path: string; text: string }[]; revision?: string };
    const r = dryRun(body.files, core.holder.current, {
      env: validationEnv(core.config), safety: core.config.gitops.safety, ...(body.revision ? { revision: body.revision } : {}),
    });
    return { valid: r.valid, problems: r.problems, plan: r.plan ? planToJson(r.plan) : null, text: r.plan ? renderPlanText(r.plan) : '' };
  });

  await app.register(webhookRoute(core, ctl));
};

/** The push webhook in its own scope: it needs the raw body for the HMAC. */
const webhookRoute = (core: Core, ctl: GitOpsController) => async (app: FastifyInstance) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 5 * 1024 * 1024 }, (_req, body, done) => done(null, body));
  app.post('/gitops/webhook', { config: { public: true }, schema: { tags: ['gitops'] } }, async (req, reply) => {
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
    if (!run) throw badRequest('gitops is not configured: set gitops.repoURL');
    // answer at once; the reconcile continues (git servers time webhooks out after a few seconds)
    run.catch(() => undefined);
    return reply.status(202).send({ accepted: true, after: push.after });
  });
};
