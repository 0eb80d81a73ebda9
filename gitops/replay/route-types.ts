/**
 * TypeScript shape of `ReplayRequest` in schemas/api-replay.v1.schema.json, for the route generics
 * of ./routes.ts (the OpenAPI client test checks both agree). No imports.
 */
export type ReplayBody = { files: { path: string; text: string }[]; log: string; revision?: string };
