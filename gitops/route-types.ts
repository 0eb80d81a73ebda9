/**
 * TypeScript shapes of the request parts in schemas/api-gitops.v1.schema.json, for the route
 * generics of gitops/routes.ts. The schema validates; these only type what it let through (the
 * OpenAPI client test checks that both agree). No imports, so the test can compile them on their
 * own.
 */

/** `HistoryQuery`: GET /gitops/history. */
export type HistoryQuery = { limit?: string };

/** `ReconcileRequest`: POST /gitops/reconcile. */
export type ReconcileBody = { force?: boolean };

/** `PlanRequest`: POST /gitops/plan. */
export type PlanBody = { files: { path: string; text: string }[]; revision?: string };
