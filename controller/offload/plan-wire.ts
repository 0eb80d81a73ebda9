import type { Row } from '../../runtime/model/types.js';
import type { Change } from '../plan/types.js';

/**
 * How a plan's changes cross from the offload worker to the main thread (docs/gitops.md "Off the
 * DNS thread"): JSON text in chunks that the main thread asks for one at a time, so no single
 * message costs it more than a few milliseconds to decode (a structured clone of 160,000 rows
 * would be decoded in one go, and Node delivers every queued message of a port in one turn).
 * `before` of updates and deletes is left out: the receiver has those rows in the snapshot the
 * plan was computed against and puts its own objects back.
 */

/** Changes `[from, to)` as JSON, `before` left out. Pure. */
export function encodeChanges(changes: readonly Change[], from: number, to: number): string {
  const out: Omit<Change, 'before'>[] = [];
  for (let i = from; i < to && i < changes.length; i++) {
    const c = changes[i]!;
    out.push(c.after === undefined ? { op: c.op, kind: c.kind, id: c.id, label: c.label, fields: c.fields } : { op: c.op, kind: c.kind, id: c.id, label: c.label, after: c.after, fields: c.fields });
  }
  return JSON.stringify(out);
}

/**
 * Changes from `encodeChanges` JSON, each update and delete given its `before` by `rowOf(kind,
 * id)`. Returns undefined when such a row is missing (the receiver's state is not the one the
 * plan was computed against). Pure apart from `rowOf`.
 */
export function decodeChanges(json: string, rowOf: (kind: string, id: string) => Row | undefined): Change[] | undefined {
  const list = JSON.parse(json) as Change[];
  for (const c of list) {
    if (c.op === 'create') continue;
    const before = rowOf(c.kind, c.id);
    if (!before) return undefined;
    c.before = before;
  }
  return list;
}
