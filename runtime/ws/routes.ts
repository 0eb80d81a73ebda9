import type { FastifyInstance } from 'fastify';
import websocket from '@fastify/websocket';
import type { Core } from '../app.js';
import { unauthorized } from '../errors.js';
import { toApi } from '../model/public.js';
import type { MemberRow, PoolRow } from '../model/types.js';
import { childrenOf, rowsOf } from '../snapshot/snapshot.js';
import { visibleTo } from '../tenancy/visibility.js';
import type { WsHub, WsClient } from './hub.js';
import type { WsClaims, WsTokens } from './token.js';
import { STATS_MESSAGE, statsForTenant } from './stats.js';

declare module 'fastify' {
  interface FastifyRequest { wsClaims?: WsClaims }
}

/** Largest message accepted from a client; clients have nothing to say beyond pings. */
const MAX_CLIENT_PAYLOAD = 4096;

/** The current members as `member_update` messages with action `snapshot`, one per member. */
export function memberSnapshotMessages(core: Core, tenantId: string | null): { type: string; payload: unknown }[] {
  const s = core.holder.current;
  const out: { type: string; payload: unknown }[] = [];
  const who = { kind: 'user' as const, tenantId, actor: 'ws' };
  for (const p of rowsOf<PoolRow>(s, 'pool').values()) {
    if (!visibleTo(who, p)) continue;
    for (const m of childrenOf<MemberRow>(s, p.id, 'member')) {
      out.push({ type: 'member_update', payload: { action: 'snapshot', poolId: p.id, member: toApi(m) } });
    }
  }
  return out;
}

/**
 * `GET /ws/token` (permission pools:read) → `{token, expiresAt}`, and `GET /ws?token=` (public
 * route: the token is the credential) upgrading to the live feed. An invalid or expired token gets
 * 401 before the upgrade. On connect the client receives the member list (`member_update`,
 * action `snapshot`) and the statistics, then live messages.
 */
export const wsRoutes = (core: Core, hub: WsHub, tokens: WsTokens) => async (app: FastifyInstance) => {
  await app.register(websocket, { options: { maxPayload: MAX_CLIENT_PAYLOAD } });
  app.get('/ws/token', { config: { permission: 'pools:read' }, schema: { tags: ['ws'] } }, async (req) =>
    tokens.issue({ tenantId: req.principal.tenantId, actor: req.principal.actor }));
  app.get('/ws', {
    websocket: true,
    config: { public: true },
    schema: { tags: ['ws'], querystring: { type: 'object', properties: { token: { type: 'string' } } } },
    preValidation: async (req) => {
      const token = (req.query as { token?: string }).token;
      if (!token) throw unauthorized('token query parameter required; get one from GET /api/v1/ws/token');
      const claims = await tokens.verify(token);
      if (!claims) throw unauthorized('invalid or expired WebSocket token');
      req.wsClaims = claims;
    },
  }, (socket, req) => {
    const client: WsClient = { socket, tenantId: req.wsClaims?.tenantId ?? null };
    hub.add(client);
    socket.on('message', () => { /* clients only listen; input is ignored */ });
    socket.on('error', () => socket.terminate());
    for (const msg of memberSnapshotMessages(core, client.tenantId)) hub.sendText(client, JSON.stringify(msg));
    hub.sendText(client, JSON.stringify({ type: STATS_MESSAGE, payload: statsForTenant(core, client.tenantId) }));
  });
};
