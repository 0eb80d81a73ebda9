import type { FastifyPluginAsync } from 'fastify';
import dnsPacket from 'dns-packet';
import type { Answerer, PendingAnswer } from './answer.js';
import type { StepTrace } from '../balancer/types.js';
import { rcodeName } from './metrics.js';
import { buildQueryPacket, QTYPES } from './query-packet.js';
import { toFqdn } from '../tenancy/names.js';
import { notFound } from '../errors.js';
import { apiRef, errorResponses } from '../api/schemas.js';
import type { SimulateBody } from './route-types.js';

/**
 * POST /simulate (permission pools:read): runs a query through the DNS server's own decoder,
 * selection and encoder, as if `clientIp` had sent it (with `ecsSubnet` as EDNS Client Subnet),
 * and returns each step's input, output and reason plus the final answer. A database still
 * loading is waited for up to `deadlineMs`, as the server does. A tenant principal may simulate
 * only the names of its own tenant's services that DNS serves; any other name (another tenant's,
 * the apex, static names, nonexistent) is the same 404, so the answer reveals nothing about it.
 * Supra-tenant principals may simulate any name.
 */
export const simulateRoutes = (answerer: Answerer, deadlineMs: number): FastifyPluginAsync => async (app) => {
  app.post<{ Body: SimulateBody }>('/simulate', {
    config: { permission: 'pools:read' },
    schema: {
      operationId: 'simulateQuery', summary: 'Run a DNS query through the selection and show each step', tags: ['dns'], body: apiRef('dns', 'SimulateRequest'),
      response: { 200: { description: "each step's decision and the answer", ...apiRef('dns', 'SimulateResult') }, ...errorResponses(400, 404) },
    },
  }, async (req) => {
    const b = req.body;
    const name = toFqdn(b.name);
    const tenantId = req.principal.tenantId;
    if (tenantId !== null) {
      // the index the answer will come from, so the row checked is the row answered
      const ix = answerer.index();
      const row = ix.snapshot.serviceByDomain.get(name);
      if (!row || row.tenantId !== tenantId || ix.unserved.has(row)) throw notFound(`no service of yours is named ${name}`);
    }
    const qtype = QTYPES[b.type ?? 'A']!;
    const packet = buildQueryPacket(b.name, qtype, b.ecsSubnet);
    const steps: StepTrace[] = [];
    let r = answerer.handle(packet, b.clientIp, false, true, steps);
    if (r && !Buffer.isBuffer(r)) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([(r as PendingAnswer).wait, new Promise<void>((res) => { timer = setTimeout(res, deadlineMs); })]);
      clearTimeout(timer);
      r = answerer.handle(packet, b.clientIp, false, false, steps);
    }
    const reply = dnsPacket.decode((r as Buffer).subarray(2));
    const rcode = (reply.flags ?? 0) & 0xf;
    const opt = (reply.additionals ?? []).find((a) => a.type === 'OPT') as { options?: { code: number; scopePrefixLength?: number }[] } | undefined;
    const ecs = opt?.options?.find((o) => o.code === 8);
    return {
      name,
      type: b.type ?? 'A',
      clientIp: b.clientIp,
      ecsSubnet: b.ecsSubnet ?? null,
      steps,
      rcode: rcodeName(rcode),
      ecsScope: ecs?.scopePrefixLength ?? null,
      answers: (reply.answers ?? []).map((a) => ({ name: `${a.name}.`, type: a.type, ttl: (a as { ttl?: number }).ttl ?? 0, data: (a as { data?: unknown }).data })),
      authority: (reply.authorities ?? []).map((a) => ({ name: `${a.name}.`, type: a.type })),
    };
  });
};
