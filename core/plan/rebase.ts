import { kindInfo } from '../model/kinds.js';
import { META_FIELDS, fieldOf, type Row } from '../model/types.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { cascadeDeletes, nullifyReferences, summarise } from './changes.js';
import { diffFields, jsonEqual } from './diff.js';
import { RowView, parentIdOf } from './row-view.js';
import type { Change, Plan } from './types.js';

/** `local` with the fields an update changed, and its ownership fields, taken from `after`. */
function mergeUpdate(local: Row, after: Row, changed: readonly string[]): Row {
  const merged: Record<string, unknown> = { ...local };
  for (const f of changed) merged[f] = fieldOf(after, f);
  for (const m of META_FIELDS) if (m !== 'id' && m !== 'kind' && m in after) merged[m] = fieldOf(after, m);
  return merged as Row;
}

/**
 * Re-checks each change of a plan received from the config stream against the local rows and
 * returns the plan this node must apply so that every node ends with the rows of "all plans
 * applied in stream order". Pure. Rules (docs/cluster.md "Config sync"):
 * - create: put the row unless its parent is gone (then make sure it is absent); identical → skip;
 * - update: merge only the changed fields onto the local row; a row that is gone stays gone;
 * - delete: delete the local row, its local children (also ones created after the plan was
 *   made, or earlier in this plan) and null the local references to it; a row already gone → skip.
 * The result has `baseVersion` = the local snapshot's version, the same revision and origin, and
 * only effective changes (possibly none).
 */
export function rebasePlan(plan: Plan, snap: Snapshot): Plan {
  const steps = rebasePlanSteps(plan, snap);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Changes rebased between two yields of `rebasePlanSteps`. */
const CHANGES_PER_STEP = 1000;

/**
 * `rebasePlan` as steps: yields after every CHANGES_PER_STEP changes and returns the plan, so a
 * large plan from the stream is rebased in slices (runtime/cluster/config-apply.ts; the caller
 * holds the write gate, so `snap` stays the current snapshot meanwhile).
 */
export function* rebasePlanSteps(plan: Plan, snap: Snapshot): Generator<void, Plan, void> {
  const view = new RowView(snap); // the local rows with the effective changes so far laid over them
  const changes: Change[] = [];
  const parentPresent = (row: Row): boolean => {
    const p = kindInfo(row.kind).parent;
    if (!p) return true;
    const pid = parentIdOf(row);
    return typeof pid === 'string' && view.get(p.kind, pid) !== undefined;
  };
  const put = (before: Row | undefined, after: Row) => {
    view.put(after);
    // a create carries no field list (core/plan/types.ts)
    const fields = before ? diffFields(before, after) : [];
    changes.push({ op: before ? 'update' : 'create', kind: after.kind, id: after.id, label: kindInfo(after.kind).label(after), ...(before ? { before } : {}), after, fields });
  };
  const remove = (row: Row) => {
    const deletes = cascadeDeletes(view, row);
    for (const d of deletes) view.remove(d.kind, d.id);
    const detached = nullifyReferences(view, new Set(deletes.map((d) => d.id)), plan.revision, deletes);
    for (const d of detached) if (d.after) view.put(d.after);
    changes.push(...deletes, ...detached);
  };

  for (let i = 0; i < plan.changes.length; i++) {
    if (i > 0 && i % CHANGES_PER_STEP === 0) yield;
    const c = plan.changes[i]!;
    const local = view.get(c.kind, c.id);
    if (c.op === 'delete') {
      if (local) remove(local);
      continue;
    }
    if (!c.after) continue; // malformed: every node skips it alike
    if (c.op === 'create') {
      if (!parentPresent(c.after)) { if (local) remove(local); continue; }
      if (local && jsonEqual(local, c.after)) continue;
      put(local, c.after);
      continue;
    }
    // update: field-level merge onto the local row
    if (!local) continue;
    const next = mergeUpdate(local, c.after, c.fields.map((f) => f.field));
    if (!parentPresent(next)) { remove(local); continue; }
    if (jsonEqual(local, next)) continue;
    put(local, next);
  }
  return { ...plan, baseVersion: snap.version, changes, counts: summarise(changes), safety: { ...plan.safety, safe: true } };
}
