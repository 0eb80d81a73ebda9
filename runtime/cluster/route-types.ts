/**
 * The TypeScript shape of `ClusterHealthQuery` in schemas/api-cluster.v1.schema.json, for the
 * route generics of GET /cluster/health. The schema validates; this only types what it let through
 * (the OpenAPI client test checks that both agree). No imports, so the test can compile it on its
 * own.
 */
export type ClusterHealthQuery = { poolId?: string; ipAddress?: string };
