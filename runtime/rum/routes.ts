import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Core } from '../app.js';
import type { MemberRow } from '../../core/model/types.js';
import { badRequest, forbidden, GslbError, notFound } from '../errors.js';
import { apiRef, errorResponses, publicErrorResponses } from '../api/schemas.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import { visibleTo } from '../tenancy/visibility.js';
import { judgeSamples, RUM_MAX_BODY_BYTES, rumTargets, serviceOf, type IngestBody } from './ingest.js';
import type { RumRuntime } from './runtime.js';
import { RUM_SCRIPT } from './script.js';

const rum = (name: string) => apiRef('rum', name);
const tags = ['rum'];
const ingestBody = { content: { 'application/json': { schema: rum('RumIngest') }, 'text/plain': { schema: rum('RumIngest') } } };

/** Pages on any site embed the script and post beacons: the public RUM routes allow any origin, never credentials. */
function anyOrigin(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*');
}

/** 403 when the licence lacks RUM (docs/rum.md "Licence"). */
function requireLicence(r: RumRuntime): void {
  const tier = r.licensed();
  if (tier !== true) throw forbidden(`real-user measurement needs the pro licence tier or above; this server runs the ${tier} tier`);
}

/**
 * /api/v1/rum/* (gslb-api.md §4; docs/rum.md): the script's targets and its beacons, without
 * authentication, and the store's status for `pools:read`. The beacon route parses its own bodies
 * (`text/plain` from `navigator.sendBeacon`, or JSON) up to 8 KB.
 */
export const rumRoutes = (core: Core, r: RumRuntime) => async (app: FastifyInstance) => {
  app.get<{ Querystring: { domain: string } }>('/rum/config', {
    config: { public: true },
    schema: {
      operationId: 'getRumConfig', summary: "A service's measurement targets (members with a rumUrl), for rum.js", tags, querystring: rum('RumConfigQuery'),
      response: { 200: { description: 'the targets; empty when no member has a rumUrl', ...rum('RumConfig') }, ...publicErrorResponses(400, 403, 404) },
    },
  }, async (req, reply) => {
    anyOrigin(reply);
    requireLicence(r);
    const s = core.holder.current;
    const svc = serviceOf(s, req.query.domain);
    if (!svc) throw notFound(`no service is named ${req.query.domain}`);
    return { domain: svc.domain, delayMs: 2000, targets: rumTargets(s, svc) };
  });

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'string', bodyLimit: RUM_MAX_BODY_BYTES }, (_req, body, done) => {
      try { done(null, JSON.parse(body as string)); } catch { done(badRequest('the body is not JSON'), undefined); }
    });
    scope.post<{ Body: IngestBody }>('/rum/ingest', {
      // beacons are anonymous, frequent and change no configuration: not audited (docs/rum.md)
      config: { public: true, noAudit: true },
      schema: {
        operationId: 'ingestRumBeacon', summary: 'Latency samples from a browser (rum.js)', tags, body: ingestBody,
        description: 'Per source address 2 requests a second, burst 10 (429 with Retry-After past it). Samples for addresses outside the service\'s pool, without a rumUrl, or with a latency outside (0, 60000] ms are refused one by one.',
        response: {
          202: { description: 'the samples taken and those refused', ...rum('RumIngestResult') },
          ...publicErrorResponses(400, 403, 404, 413, 415, 429),
        },
      },
    }, async (req, reply) => {
      anyOrigin(reply);
      requireLicence(r);
      const source = req.ip;
      const take = await r.take(source);
      if (!take.ok) {
        reply.header('retry-after', String(take.retryAfterS));
        throw new GslbError('API_RATE_LIMITED', take.full ? 'too many sources are sending beacons; retry later' : 'too many beacons from this address; retry later');
      }
      const s = core.holder.current;
      const svc = serviceOf(s, req.body.domain);
      if (!svc) throw notFound(`no service is named ${req.body.domain}`);
      const judged = judgeSamples(s, svc, req.body.samples);
      const taken = r.record(source, judged.accepted);
      if (!taken) throw badRequest(`the source address ${source} has no subnet`);
      return reply.status(202).send({ accepted: judged.accepted.length, rejected: judged.rejected });
    });
  });

  // A beacon posted as application/json (not CORS-safelisted, unlike rum.js's text/plain) is
  // preceded by a preflight: any origin, POST with Content-Type, no credentials (docs/rum.md).
  app.options('/rum/ingest', { config: { public: true, noAudit: true }, schema: { hide: true } }, async (_req, reply) => {
    anyOrigin(reply);
    reply.header('access-control-allow-methods', 'POST, OPTIONS');
    reply.header('access-control-allow-headers', 'Content-Type');
    reply.header('access-control-max-age', '600');
    return reply.status(204).send();
  });

  app.get('/rum/status', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getRumStatus', summary: "What the RUM subnet store holds for the caller's members", tags, response: { 200: { description: 'subnets, measurements and per-member counts', ...rum('RumStatus') }, ...errorResponses() } },
  }, async (req) => {
    const s = core.holder.current;
    const mine = [...rowsOf<MemberRow>(s, 'member').values()].filter((m) => visibleTo(req.principal, m));
    const ips = new Set(mine.map((m) => m.ipAddress));
    const cov = r.store.coverage((ip) => ips.has(ip));
    const members = mine.flatMap((m) => {
      const c = cov.members.get(m.ipAddress);
      return c ? [{ poolId: m.poolId, ipAddress: m.ipAddress, subnets: c.subnets, measurements: c.samples }] : [];
    });
    return {
      subnets: cov.subnets, measurements: cov.samples, members, limits: r.limits,
      ...(req.principal.tenantId === null ? { store: r.store.counts() } : {}),
    };
  });
};

/** `/rum.js` at the API host's root (outside /api/v1), cacheable for an hour, from any origin. */
export const rumScriptRoute = async (app: FastifyInstance) => {
  app.get('/rum.js', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => {
    anyOrigin(reply);
    reply.header('cache-control', 'public, max-age=3600');
    return reply.type('application/javascript; charset=utf-8').send(RUM_SCRIPT);
  });
};
