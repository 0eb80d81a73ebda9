import type { Origin, Row } from '../model/types.js';

/** A field-level difference inside an update. */
export interface FieldChange { field: string; before: unknown; after: unknown }

export type ChangeOp = 'create' | 'update' | 'delete';

/** One change of one row. `before` is absent on create, `after` on delete. */
export interface Change {
  op: ChangeOp;
  kind: string;
  id: string;
  /** human label, e.g. `pool "eu"` */
  label: string;
  before?: Row;
  after?: Row;
  /**
   * The field-level changes of an update. Creates and deletes carry none (`[]`: every content
   * field of `after` or `before` changes; a plan of 100,000 creates would carry each row twice):
   * `fieldChanges` derives a create's. Plans from older nodes may still list them for creates.
   */
  fields: FieldChange[];
}

export type SafetyReason = 'TooManyUpdates' | 'TooManyDeletes';

/** octoDNS-style safety verdict (DESIGN decision 6). */
export interface Safety {
  safe: boolean;
  reason?: SafetyReason;
  message?: string;
  existing: number;
  updates: number;
  deletes: number;
  maxChangePercent: number;
  minExisting: number;
}

/**
 * The central data type: an ordered list of changes, their counts and a safety verdict. Ids of new
 * rows are chosen when the plan is made, so every node applying the same plan gets the same rows.
 */
export interface Plan {
  revision: string;
  origin: Origin;
  /** snapshot version the plan was computed against; apply refuses a plan made on a stale view */
  baseVersion: number;
  changes: Change[];
  counts: { create: number; update: number; delete: number };
  safety: Safety;
  /**
   * The plan id (plan-id.ts), when whoever made the plan computed it already (a plan made
   * off-thread carries it, so the applier does not hash a large plan on the DNS thread). Not
   * part of the plan's JSON or of its id.
   */
  id?: string;
}

/** A desired row as produced by the manifest loader: natural key, fields and references by key. */
export interface DesiredRow {
  kind: string;
  key: string;
  fields: Record<string, unknown>;
  /** references resolved to ids by the planner: `fields[field] = id of (kind, key)` */
  refs?: { field: string; kind: string; key: string | null }[];
  source?: string;
}
