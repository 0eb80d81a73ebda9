import { allKinds, kindInfo } from '../model/kinds.js';
import { fieldOf, type Row } from '../model/types.js';
import type { RowView } from './row-view.js';
import type { Change, Plan } from './types.js';

/** Orders changes for apply: creates and updates parents-first, then deletes children-first. Stable. */
export function orderChanges(changes: Change[]): Change[] {
  const rank = new Map(allKinds().map((k) => [k.kind, k.order]));
  const r = (c: Change) => rank.get(c.kind) ?? 1000;
  const upserts = changes.filter((c) => c.op !== 'delete').sort((a, b) => r(a) - r(b));
  const deletes = changes.filter((c) => c.op === 'delete').sort((a, b) => r(b) - r(a));
  return [...upserts, ...deletes];
}

/** Counts of creates, updates and deletes. */
export function summarise(changes: readonly Change[]): Plan['counts'] {
  const counts = { create: 0, update: 0, delete: 0 };
  for (const c of changes) counts[c.op]++;
  return counts;
}

/**
 * Updates that clear references to deleted rows (a service pointing at a deleted pool is detached),
 * skipping rows that `already` deletes or updates. Reads the rows of `view` as they stand (a bare
 * snapshot, or one with a plan's own changes laid over it).
 */
export function nullifyReferences(view: RowView, deletedIds: ReadonlySet<string>, revision: string, already: readonly Change[]): Change[] {
  if (deletedIds.size === 0) return [];
  const touched = new Set(already.map((c) => c.id));
  const out: Change[] = [];
  for (const info of allKinds()) {
    for (const ref of info.nullifiedBy ?? []) {
      for (const row of view.rowsOf(ref.kind)) {
        const v = fieldOf(row, ref.field);
        if (typeof v !== 'string' || !deletedIds.has(v) || touched.has(row.id) || deletedIds.has(row.id)) continue;
        const after = { ...row, [ref.field]: null, revision } as Row;
        out.push({ op: 'update', kind: row.kind, id: row.id, label: kindInfo(row.kind).label(row), before: row, after, fields: [{ field: ref.field, before: v, after: null }] });
      }
    }
  }
  return out;
}

/**
 * Delete changes for a row and, recursively, every child of it (pool → members, check, rules) as
 * `view` sees them: with a plan's own changes laid over the snapshot, children the plan created
 * are deleted too.
 */
export function cascadeDeletes(view: RowView, row: Row): Change[] {
  const out: Change[] = [];
  const visit = (r: Row) => {
    out.push({ op: 'delete', kind: r.kind, id: r.id, label: kindInfo(r.kind).label(r), before: r, fields: [] });
    for (const child of view.childrenOf(r.id)) visit(child);
  };
  visit(row);
  return out;
}
