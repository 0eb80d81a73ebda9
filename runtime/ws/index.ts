/** The live WebSocket feed (gslb-api.md §6, docs/health.md "WebSocket feed"). */
export { WsTokens, WS_TOKEN_TTL_S, type WsClaims } from './token.js';
export { WsHub, MAX_BUFFERED_BYTES, type WsClient } from './hub.js';
export { messageTenant, type MessageTenant } from './tenant.js';
export { STATS_MESSAGE, STATS_INTERVAL_MS, statsForTenant } from './stats.js';
export { wsRoutes, memberSnapshotMessages } from './routes.js';
