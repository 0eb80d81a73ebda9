import { kindInfo } from '../model/kinds.js';
import type { Origin, Row } from '../model/types.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { diffFields, sameContent } from './diff.js';
import { judgeSafety, DEFAULT_SAFETY, type SafetyOptions } from './safety.js';
import { nullifyReferences, orderChanges, summarise } from './changes.js';
import { RowView } from './row-view.js';
import type { Change, DesiredRow, Plan } from './types.js';

export interface PlanInput {
  desired: readonly DesiredRow[];
  actual: Snapshot;
  revision: string;
  /** chooses the id of a new row; must be deterministic for golden tests (an input, not a clock) */
  newId: (kind: string, key: string) => string;
  tenantId: string;
  source?: string;
  safety?: SafetyOptions;
  origin?: Origin;
}

const keyOf = (kind: string, key: string) => `${kind}\u0000${key}`;

/**
 * Computes the Plan that turns the git-owned rows of `actual` into `desired`. Pure: no I/O, no
 * clock, no randomness (ids come from `newId`). Only rows with origin `git` are created, updated
 * or pruned; REST-owned rows are left alone except that references to a pruned row are cleared.
 * Errors: throws when a reference names a key that is neither desired nor existing.
 */
export function planChanges(input: PlanInput): Plan {
  const origin = input.origin ?? 'git';
  const existing = new Map<string, Row>();
  for (const [, map] of input.actual.rows) {
    for (const row of map.values()) if (row.origin === origin && row.key !== undefined) existing.set(keyOf(row.kind, row.key), row);
  }
  // every desired key, with its row's id (the existing row's, or a new one); the keys are made once
  const ids = new Map<string, string>();
  const keys: string[] = new Array<string>(input.desired.length);
  input.desired.forEach((d, i) => {
    const k = (keys[i] = keyOf(d.kind, d.key));
    if (ids.has(k)) throw new Error(`duplicate desired ${d.kind} "${d.key}"`);
    ids.set(k, existing.get(k)?.id ?? input.newId(d.kind, d.key));
  });

  const changes: Change[] = [];
  input.desired.forEach((d, i) => {
    const k = keys[i]!;
    // the content fields, then (unless unchanged) the row's own: assigned in the order of the
    // object literal `{ ...fields, id, kind, … }`, which gives the same row, without a second copy
    const fields: Record<string, unknown> = { ...d.fields };
    for (const ref of d.refs ?? []) {
      if (ref.key === null) { fields[ref.field] = null; continue; }
      const id = ids.get(keyOf(ref.kind, ref.key));
      if (!id) throw new Error(`${d.kind} "${d.key}" references unknown ${ref.kind} "${ref.key}"`);
      fields[ref.field] = id;
    }
    const before = existing.get(k);
    const source = d.source ?? input.source;
    if (before && before.source === source && sameContent(before, fields)) return;
    fields.id = ids.get(k)!;
    fields.kind = d.kind;
    fields.origin = origin;
    fields.revision = input.revision;
    fields.source = source;
    fields.key = d.key;
    fields.tenantId = input.tenantId;
    const after = fields as Row;
    const label = kindInfo(d.kind).label(after);
    if (!before) {
      changes.push({ op: 'create', kind: d.kind, id: after.id, label, after, fields: [] });
      return;
    }
    const fc = diffFields(before, after);
    // a manifest moved to another file: the row must name its new file (the 409 on REST writes cites it)
    if (before.source !== after.source) fc.push({ field: 'source', before: before.source ?? null, after: after.source ?? null });
    if (fc.length > 0) changes.push({ op: 'update', kind: d.kind, id: after.id, label, before, after, fields: fc });
  });
  const deleted = new Set<string>();
  for (const [k, row] of existing) {
    // `ids` holds exactly the desired keys
    if (ids.has(k)) continue;
    deleted.add(row.id);
    changes.push({ op: 'delete', kind: row.kind, id: row.id, label: kindInfo(row.kind).label(row), before: row, fields: [] });
  }
  changes.push(...nullifyReferences(new RowView(input.actual), deleted, input.revision, changes));
  const ordered = orderChanges(changes);
  return {
    revision: input.revision,
    origin,
    baseVersion: input.actual.version,
    changes: ordered,
    counts: summarise(ordered),
    safety: judgeSafety(ordered, existing.size, input.safety ?? DEFAULT_SAFETY),
  };
}
