/**
 * TypeScript shape of `AlertTargetBody` in schemas/api-alerttargets.v1.schema.json, for the route
 * generics of ./routes.ts. The schema validates; this only types what it let through (the OpenAPI
 * client test checks that both agree).
 */
export type SecretRefBody = { env: string } | { file: string };

export type AlertTargetBody = {
  name: string;
  type: 'webhook' | 'oncall_a' | 'oncall_b' | 'email';
  webhook?: { url: string; secret?: SecretRefBody };
  oncall_a?: { routingKey: SecretRefBody; severity?: 'critical' | 'error' | 'warning' | 'info'; baseUrl?: string };
  oncall_b?: { apiKey: SecretRefBody; priority?: 'P1' | 'P2' | 'P3' | 'P4' | 'P5'; region?: 'us' | 'eu'; baseUrl?: string };
  email?: { to: string[] };
  pools?: string[];
  services?: string[];
  events?: ('health' | 'apply' | 'rejection' | 'rollback')[];
  enabled?: boolean;
  id?: unknown;
  origin?: unknown;
  revision?: unknown;
  source?: unknown;
};
