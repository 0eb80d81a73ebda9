// What other folders may use of auth: who a request is (principal, permissions), how the API
// authenticates it, the routes' access table, and the session and single-use stores the core holds
// (memory per node; the cluster swaps in NATS KV).
export { actorOf, authenticate, systemKeyAuthenticator, type Authenticator } from './authenticate.js';
export { collectRoutes, type RouteAccess } from './route-registry.js';
export { principalAllows, type Principal } from './principal.js';
export type { Permission } from './permissions.js';
export { MemoryNonceStore, MemorySessionStore, type NonceStore, type SessionRecord, type SessionStore } from './stores.js';
