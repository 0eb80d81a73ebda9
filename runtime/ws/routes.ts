import type { FastifyInstance } from 'fastify';
import websocket from '@fastify/websocket';
import type { Core } from '../app.js';
import { unauthorized } from '../errors.js';
import { toApi } from '../../core/model/public.js';
import { membersOf, visiblePools } from '../resources/port.js';
import type { WsHub, WsClient } from './hub.js';
import type { WsClaims, WsTokens } from './token.js';
import { STATS_MESSAGE, statsForTenant } from './stats.js';
import { apiRef, documentRef, errorResponses, publicErrorResponses } from '../api/schemas.js';
import type { WsQuery } from './route-types.js';

declare module 'fastify' {
  interface FastifyRequest { wsClaims?: WsClaims }
}

/** Largest message accepted from a client; clients have nothing to say beyond pings. */
const MAX_CLIENT_PAYLOAD = 4096;

/** The current members (the static pool's included) as `member_update` messages with action `snapshot`, one per member. */
export function memberSnapshotMessages(core: Core, tenantId: string | null): { type: string; payload: unknown }[] {
  const out: { type: string; payload: unknown }[] = [];
  for (const p of visiblePools(core, { tenantId })) {
    for (const m of membersOf(core, p.id)) {
      out.push({ type: 'member_update', payload: { action: 'snapshot', poolId: p.id, member: toApi(m) } });
    }
  }
  return out;
}

/** Message types of the feed and their schemas (schemas/api-ws.v1.schema.json), for the document. */
const MESSAGES = {
  health_update: documentRef('ws', 'HealthUpdate'),
  pool_update: documentRef('ws', 'PoolUpdate'),
  member_update: documentRef('ws', 'MemberUpdate'),
  service_update: documentRef('ws', 'ServiceUpdate'),
  [STATS_MESSAGE]: documentRef('ws', 'StatsUpdate'),
  gitops_rejected: documentRef('ws', 'GitopsRejected'),
  gitops_rollback: documentRef('ws', 'GitopsRollback'),
};

const FEED_DESCRIPTION = `Upgrades to the live feed (gslb-api.md §6). Each message is JSON text \`{type, payload}\`
(\`WsMessage\`; \`x-messages\` maps each type to its schema): ${Object.keys(MESSAGES).map((t) => `\`${t}\``).join(', ')}.
On connect the client receives one \`member_update\` with action \`snapshot\` per member, then \`${STATS_MESSAGE}\`;
then live messages of its own tenant's resources. Input from the client is ignored.`;

/** The feed's operation; `x-messages` is an OpenAPI extension, outside fastify's schema type. */
const FEED_SCHEMA = {
  operationId: 'openLiveFeed', summary: 'The live feed (WebSocket)', description: FEED_DESCRIPTION, tags: ['ws'],
  querystring: apiRef('ws', 'WsQuery'),
  response: { 101: { description: 'Switching Protocols: the WebSocket feed', type: 'null' }, ...publicErrorResponses(400, 401, 426) },
  'x-messages': MESSAGES,
};

/**
 * `GET /ws/token` (permission pools:read) → `{token, expiresAt}`, and `GET /ws?token=` (public
 * route: the token is the credential) upgrading to the live feed. An invalid or expired token gets
 * 401 before the upgrade; a valid one without an upgrade request gets 426. On connect the client
 * receives the member list (`member_update`, action `snapshot`) and the statistics, then live messages.
 */
export const wsRoutes = (core: Core, hub: WsHub, tokens: WsTokens) => async (app: FastifyInstance) => {
  await app.register(websocket, { options: { maxPayload: MAX_CLIENT_PAYLOAD } });
  app.get('/ws/token', {
    config: { permission: 'pools:read' },
    schema: { operationId: 'getWsToken', summary: 'A token to open the live feed', tags: ['ws'], response: { 200: { description: 'the token and its expiry', ...apiRef('ws', 'WsToken') }, ...errorResponses() } },
  }, async (req) => tokens.issue({ tenantId: req.principal.tenantId, actor: req.principal.actor }));
  // `wsHandler` (not `websocket: true`, which hides the route from the document): a plain GET
  // reaches `handler`
  app.route<{ Querystring: WsQuery }>({
    method: 'GET',
    url: '/ws',
    config: { public: true },
    schema: FEED_SCHEMA,
    preValidation: async (req) => {
      const token = req.query.token;
      if (!token) throw unauthorized('token query parameter required; get one from GET /api/v1/ws/token');
      const claims = await tokens.verify(token);
      if (!claims) throw unauthorized('invalid or expired WebSocket token');
      req.wsClaims = claims;
    },
    handler: async (_req, reply) => reply.status(426).header('upgrade', 'websocket').send({ error: 'this route is a WebSocket: send an upgrade request' }),
    wsHandler: (socket, req) => {
      const client: WsClient = { socket, tenantId: req.wsClaims?.tenantId ?? null };
      hub.add(client);
      socket.on('message', () => { /* clients only listen; input is ignored */ });
      socket.on('error', () => socket.terminate());
      for (const msg of memberSnapshotMessages(core, client.tenantId)) hub.sendText(client, JSON.stringify(msg));
      hub.sendText(client, JSON.stringify({ type: STATS_MESSAGE, payload: statsForTenant(core, client.tenantId) }));
    },
  });
};
