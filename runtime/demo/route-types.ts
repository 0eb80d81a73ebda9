/**
 * The TypeScript shape of `DemoBackendParams` in schemas/api-demo.v1.schema.json, for the route
 * generics of POST /demo/backends/{name}/{action}. The schema validates; this only types what it
 * let through (the OpenAPI client test checks that both agree). No imports, so the test can
 * compile it on its own.
 */
export type DemoBackendParams = { name: string; action: 'stop' | 'start' };
