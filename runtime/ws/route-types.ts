/**
 * The TypeScript shape of `WsQuery` in schemas/api-ws.v1.schema.json, for the route generics of
 * GET /ws. The schema validates; this only types what it let through (the OpenAPI client test
 * checks that both agree). No imports, so the test can compile it on its own.
 */
export type WsQuery = { token?: string };
