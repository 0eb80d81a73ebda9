/**
 * TypeScript shape of `RedirectBody` in schemas/api-redirects.v1.schema.json, for the route
 * generics of ./routes.ts. The schema validates; this only types what it let through (the
 * OpenAPI client test checks that both agree).
 */
export type RedirectBody = {
  host: string;
  target: string;
  code?: 301 | 302;
  preservePath?: boolean;
  id?: unknown;
  origin?: unknown;
  revision?: unknown;
  source?: unknown;
};
