import type { Row } from '../../runtime/model/types.js';
import type { Change } from '../plan/types.js';

/**
 * How a plan's changes cross from the offload worker to the main thread (docs/gitops.md "Off the
 * DNS thread"): in chunks that the main thread asks for one at a time, so no single message costs
 * it more than a few milliseconds to decode (a structured clone of 160,000 rows would be decoded
 * in one go, and Node delivers every queued message of a port in one turn). A chunk is JSON text:
 * the changes without their rows, and each change's `after` as a JSON text of its own, which the
 * main thread stores as it is (the row's `data` column) instead of stringifying the row it parsed
 * from it again. `before` of updates and deletes is left out: the receiver has those rows in the
 * snapshot the plan was computed against and puts its own objects back.
 */
export interface WireChunk {
  /** the changes as JSON, without `before` and `after` */
  changes: string;
  /** per change, `JSON.stringify(after)` ('' for a delete) */
  rows: string[];
}

/** Changes `[from, to)` as a chunk. Pure. */
export function encodeChanges(changes: readonly Change[], from: number, to: number): WireChunk {
  const out: object[] = [];
  const rows: string[] = [];
  for (let i = from; i < to && i < changes.length; i++) {
    const c = changes[i]!;
    // `after: 0` holds the place of the row, so a decoded change has its keys in the usual order
    if (c.after === undefined) {
      out.push({ op: c.op, kind: c.kind, id: c.id, label: c.label, fields: c.fields });
      rows.push('');
    } else {
      out.push({ op: c.op, kind: c.kind, id: c.id, label: c.label, after: 0, fields: c.fields });
      rows.push(JSON.stringify(c.after));
    }
  }
  return { changes: JSON.stringify(out), rows };
}

/**
 * Changes from an `encodeChanges` chunk, each update and delete given its `before` by `rowOf(kind,
 * id)`; `rowJson` holds the JSON text of each change's `after` (undefined for a delete), which is
 * what `JSON.stringify(after)` gives on this side too (JSON.parse keeps the text's key order).
 * Returns undefined when such a row is missing (the receiver's state is not the one the plan was
 * computed against) or the chunk does not hold together. Pure apart from `rowOf`.
 */
export function decodeChanges(chunk: WireChunk, rowOf: (kind: string, id: string) => Row | undefined): { changes: Change[]; rowJson: (string | undefined)[] } | undefined {
  const list = JSON.parse(chunk.changes) as Change[];
  if (list.length !== chunk.rows.length) return undefined;
  const rowJson: (string | undefined)[] = new Array<string | undefined>(list.length);
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    const text = chunk.rows[i]!;
    if ((text !== '') !== ('after' in c)) return undefined;
    if (text !== '') {
      c.after = JSON.parse(text) as Row;
      rowJson[i] = text;
    }
    if (c.op === 'create') continue;
    const before = rowOf(c.kind, c.id);
    if (!before) return undefined;
    c.before = before;
  }
  return { changes: list, rowJson };
}
