/**
 * The TypeScript shape of `SimulateRequest` in schemas/api-dns.v1.schema.json, for the route
 * generics of POST /simulate. The schema validates; this only types what it let through (the
 * OpenAPI client test checks that both agree). No imports, so the test can compile it on its own.
 */
export type SimulateBody = { name: string; type?: 'A' | 'NS' | 'SOA' | 'AAAA' | 'ANY'; clientIp: string; ecsSubnet?: string };
