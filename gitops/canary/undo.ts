import { kindInfo } from '../../core/model/kinds.js';
import { META_FIELDS, fieldOf, type Origin, type Row } from '../../core/model/types.js';
import { getRow, type Snapshot } from '../../core/snapshot/snapshot.js';
import { rebasePlan } from '../../core/plan/rebase.js';
import { jsonEqual } from '../../core/plan/diff.js';
import { summarise } from '../../core/plan/changes.js';
import type { Change, Plan } from '../../core/plan/types.js';

const order = (c: Change) => kindInfo(c.kind).order;

/**
 * The plan that takes back what a canary node applied (`applied`: the rebased plan it committed)
 * on the rows it holds now (docs/gitops.md "Canary apply", "Abort"). Pure. Per change:
 * - a row the canary plan created is deleted (with its children, as any delete);
 * - a row it deleted is put back as it was before (parents first);
 * - of a row it updated, each changed field that still holds the canary's value goes back to its
 *   value before; a field written since by a later plan keeps the later value; the ownership
 *   fields (revision, origin, source) go back only while the canary revision is still the row's
 *   last writer.
 * So the canary node ends with the rows of a node that skipped the canary plan and applied the
 * same later plans. The result is rebased on `snap` (only effective changes, `baseVersion` the
 * snapshot's) and carries `revision` and `origin` (the revision returned to).
 */
export function undoPlan(applied: Plan, snap: Snapshot, revision: string, origin: Origin): Plan {
  const recreate: Change[] = [];
  const revert: Change[] = [];
  const remove: Change[] = [];
  for (const c of applied.changes) {
    if (c.op === 'create' && c.after) {
      remove.push({ op: 'delete', kind: c.kind, id: c.id, label: c.label, before: c.after, fields: [] });
    } else if (c.op === 'delete' && c.before) {
      recreate.push({ op: 'create', kind: c.kind, id: c.id, label: c.label, after: c.before, fields: [] });
    } else if (c.op === 'update' && c.before && c.after) {
      const local = getRow(snap, c.kind, c.id);
      if (!local) continue; // deleted since: stays deleted, as on the nodes that skipped the canary
      const back: Record<string, unknown> = { ...local };
      const fields = c.fields.filter((f) => jsonEqual(fieldOf(local, f.field), f.after));
      for (const f of fields) back[f.field] = fieldOf(c.before, f.field);
      const lastWriter = fieldOf(local, 'revision') === fieldOf(c.after, 'revision');
      for (const m of META_FIELDS) {
        if (m === 'id' || m === 'kind') continue;
        const from = lastWriter ? c.before : local;
        if (m in from) back[m] = fieldOf(from, m); else delete back[m];
      }
      revert.push({ op: 'update', kind: c.kind, id: c.id, label: c.label, before: local, after: back as Row, fields: fields.map((f) => ({ field: f.field, before: f.after, after: f.before })) });
    }
  }
  // parents before children when putting rows back; children before parents when removing
  recreate.sort((a, b) => order(a) - order(b));
  remove.sort((a, b) => order(b) - order(a));
  const changes = [...recreate, ...revert, ...remove];
  const inverse: Plan = { ...applied, revision, origin, changes, counts: summarise(changes) };
  return rebasePlan(inverse, snap);
}
