/**
 * TypeScript shape of `TxtRecordBody` in schemas/api-txt.v1.schema.json, for the route generics
 * of runtime/txt/routes.ts (the OpenAPI client test checks both agree).
 */
export type TxtRecordBody = {
  name: string;
  values: string[];
  ttl?: number;
  id?: unknown;
  origin?: unknown;
  revision?: unknown;
  source?: unknown;
};
