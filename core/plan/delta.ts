import { kindInfo } from '../model/kinds.js';
import type { Row } from '../model/types.js';
import { getRow, type Snapshot } from '../snapshot/snapshot.js';
import { conflict } from '../../runtime/errors.js';
import { diffFields } from './diff.js';
import { cascadeDeletes, nullifyReferences, orderChanges, summarise } from './changes.js';
import { judgeSafety } from './safety.js';
import { RowView } from './row-view.js';
import type { Change, Plan } from './types.js';

/**
 * Plans for one-resource REST writes (DESIGN: "REST write → desired delta (one resource)"). Each
 * returns a Plan for the one applier. Pure. Errors: 409 (GslbError API_CONFLICT) when the row, or
 * the parent it would be created under, is owned by git (DESIGN decision 3) or by the config file.
 */
function wrap(s: Snapshot, revision: string, changes: Change[]): Plan {
  const ordered = orderChanges(changes);
  return {
    revision, origin: 'api', baseVersion: s.version, changes: ordered, counts: summarise(ordered),
    safety: judgeSafety(ordered, 0, { maxChangePercent: 100, minExisting: Number.MAX_SAFE_INTEGER }),
  };
}

/**
 * Refuses a REST write to a git-owned row with a 409 that names the file and commit to change, and
 * to a row of the config file (the static pool) with a 409 that names the file's key.
 */
export function assertApiWritable(row: Row, action = 'change'): void {
  if (row.origin === 'config') {
    throw conflict(`${kindInfo(row.kind).label(row)} is read-only: it comes from the config file (${row.source ?? 'loadbalancer.endpoints'}); ${action} it there and restart gslbd`);
  }
  if (row.origin !== 'git') return;
  const where = row.source ? `declared in ${row.source} at commit ${row.revision.slice(0, 12)}` : `commit ${row.revision.slice(0, 12)}`;
  throw conflict(`${kindInfo(row.kind).label(row)} is managed by git (${where}); ${action} it in the config repo instead`);
}

function assertParentWritable(s: Snapshot, row: Row): void {
  const p = kindInfo(row.kind).parent;
  if (!p) return;
  const parent = getRow(s, p.kind, String((row as Record<string, unknown>)[p.field]));
  if (parent) assertApiWritable(parent, 'add to');
}

/** Plan creating one row (with origin `api`). */
export function planCreate(s: Snapshot, row: Row, revision: string): Plan {
  return planCreateAll(s, [row], revision);
}

/**
 * Plan creating several rows at once (a copy of a form with its actions): one plan, so the rows
 * appear together or not at all. Rows may name each other as parents; a parent that already
 * exists must be writable, as with {@link planCreate}.
 */
export function planCreateAll(s: Snapshot, rows: readonly Row[], revision: string): Plan {
  const changes: Change[] = rows.map((row) => {
    assertParentWritable(s, row);
    const after = { ...row, origin: 'api', revision } as Row;
    return { op: 'create', kind: row.kind, id: row.id, label: kindInfo(row.kind).label(after), after, fields: [] };
  });
  return wrap(s, revision, changes);
}

/** Plan replacing one row's fields; no change gives an empty plan. */
export function planUpdate(s: Snapshot, before: Row, after: Row, revision: string): Plan {
  assertApiWritable(before);
  const next = { ...after, id: before.id, kind: before.kind, origin: before.origin, tenantId: before.tenantId, revision } as Row;
  const fields = diffFields(before, next);
  if (fields.length === 0) return wrap(s, revision, []);
  return wrap(s, revision, [{ op: 'update', kind: before.kind, id: before.id, label: kindInfo(before.kind).label(next), before, after: next, fields }]);
}

/** Plan deleting one row, its children, and references to it. */
export function planDelete(s: Snapshot, row: Row, revision: string): Plan {
  assertApiWritable(row, 'delete');
  const view = new RowView(s);
  const deletes = cascadeDeletes(view, row);
  const ids = new Set(deletes.map((c) => c.id));
  return wrap(s, revision, [...deletes, ...nullifyReferences(view, ids, revision, deletes)]);
}

/**
 * One plan made of several one-row plans built against the same snapshot (an RFC 2136 UPDATE that
 * touches several names): their changes applied together or not at all. The rows must differ, and
 * each plan must have been made with `revision`.
 */
export function planCombine(s: Snapshot, plans: readonly Plan[], revision: string): Plan {
  return wrap(s, revision, plans.flatMap((p) => p.changes));
}
