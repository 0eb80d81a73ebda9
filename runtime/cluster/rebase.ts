import type { Change, Plan } from '../../controller/plan/types.js';
import { diffFields, jsonEqual } from '../../controller/plan/diff.js';
import { allKinds, kindInfo } from '../model/kinds.js';
import { META_FIELDS, type Row } from '../model/types.js';
import { childrenOf, getRow, type Snapshot } from '../snapshot/snapshot.js';

/**
 * Re-checks each change of a plan received from the config stream against the local rows and
 * returns the plan this node must apply so that every node ends with the rows of "all plans
 * applied in stream order". Pure. Rules (docs/cluster.md "Config sync"):
 * - create: put the row unless its parent is gone (then make sure it is absent); identical → skip;
 * - update: merge only the changed fields onto the local row; a row that is gone stays gone;
 * - delete: delete the local row, its local children (also ones created after the plan was
 *   made) and null the local references to it; a row already gone → skip.
 * The result has `baseVersion` = the local snapshot's version, the same revision and origin, and
 * only effective changes (possibly none).
 */
export function rebasePlan(plan: Plan, snap: Snapshot): Plan {
  const rows = new Map<string, Row | null>(); // `${kind}/${id}` → row after the changes so far (null = deleted)
  const changes: Change[] = [];
  const keyOf = (kind: string, id: string) => `${kind}/${id}`;
  const current = (kind: string, id: string): Row | undefined => {
    const k = keyOf(kind, id);
    if (rows.has(k)) return rows.get(k) ?? undefined;
    return getRow(snap, kind, id);
  };
  const parentPresent = (row: Row): boolean => {
    const p = kindInfo(row.kind).parent;
    if (!p) return true;
    const pid = (row as unknown as Record<string, unknown>)[p.field];
    return typeof pid === 'string' && current(p.kind, pid) !== undefined;
  };
  const put = (before: Row | undefined, after: Row) => {
    rows.set(keyOf(after.kind, after.id), after);
    const op = before ? 'update' : 'create';
    changes.push({ op, kind: after.kind, id: after.id, label: kindInfo(after.kind).label(after), ...(before ? { before } : {}), after, fields: diffFields(before ?? ({ id: '', kind: after.kind } as Row), after) });
  };
  const remove = (row: Row) => {
    // children first is not needed for storage; parents are removed before their children are
    // visited, and children are looked up in the local snapshot plus this plan's creates.
    rows.set(keyOf(row.kind, row.id), null);
    changes.push({ op: 'delete', kind: row.kind, id: row.id, label: kindInfo(row.kind).label(row), before: row, fields: [] });
    for (const info of allKinds()) {
      if (info.parent?.kind === row.kind) {
        for (const child of childrenOf(snap, row.id, info.kind)) if (current(child.kind, child.id)) remove(current(child.kind, child.id)!);
        for (const r of [...rows.values()]) if (r && r.kind === info.kind && (r as unknown as Record<string, unknown>)[info.parent.field] === row.id) remove(r);
      }
    }
    for (const ref of kindInfo(row.kind).nullifiedBy ?? []) {
      const candidates = new Map<string, Row>();
      for (const r of (snap.rows.get(ref.kind) ?? new Map<string, Row>()).values()) candidates.set(r.id, r);
      for (const r of rows.values()) if (r && r.kind === ref.kind) candidates.set(r.id, r);
      for (const r of candidates.values()) {
        const cur = current(r.kind, r.id);
        if (cur && (cur as unknown as Record<string, unknown>)[ref.field] === row.id) put(cur, { ...cur, [ref.field]: null, revision: plan.revision } as Row);
      }
    }
  };

  for (const c of plan.changes) {
    const local = current(c.kind, c.id);
    if (c.op === 'delete') {
      if (local) remove(local);
      continue;
    }
    const after = c.after!;
    if (c.op === 'create') {
      if (!parentPresent(after)) { if (local) remove(local); continue; }
      if (local && jsonEqual(local, after)) continue;
      put(local, after);
      continue;
    }
    // update: field-level merge onto the local row
    if (!local) continue;
    const merged: Record<string, unknown> = { ...local };
    for (const f of c.fields) merged[f.field] = (after as unknown as Record<string, unknown>)[f.field];
    for (const m of META_FIELDS) if (m !== 'id' && m !== 'kind' && m in after) merged[m] = (after as unknown as Record<string, unknown>)[m];
    const next = merged as unknown as Row;
    if (!parentPresent(next)) { remove(local); continue; }
    if (jsonEqual(local, next)) continue;
    put(local, next);
  }
  const counts = { create: 0, update: 0, delete: 0 };
  for (const c of changes) counts[c.op]++;
  return { ...plan, baseVersion: snap.version, changes, counts, safety: { ...plan.safety, safe: true } };
}
