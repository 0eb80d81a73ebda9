import type { Row } from '../../core/model/types.js';
import type { Change } from '../../core/plan/types.js';

/**
 * How a plan's changes cross from the offload worker to the main thread (docs/gitops.md "Off the
 * DNS thread"): in chunks that the main thread asks for one at a time, so no single message costs
 * it more than a few milliseconds to decode (a structured clone of 160,000 rows would be decoded
 * in one go, and Node delivers every queued message of a port in one turn). A chunk is JSON text:
 * the changes without their rows, and each change's `after` as a JSON text of its own, which the
 * main thread stores as it is (the row's `data` column) instead of stringifying the row it parsed
 * from it again. The row texts travel as one string with their end offsets: the receiver's texts
 * are slices of it, so the main thread's heap holds one large string per chunk rather than
 * thousands of small ones that its young-generation collections would copy. `before` of updates
 * and deletes is left out: the receiver has those rows in the snapshot the plan was computed
 * against and puts its own objects back.
 */
export interface WireChunk {
  /** the changes as JSON, without `before` and `after` */
  changes: string;
  /** the changes' `JSON.stringify(after)` one after the other (nothing for a delete) */
  rows: string;
  /** per change, where its row text ends in `rows` (it starts where the one before ends) */
  ends: Uint32Array;
}

/** Changes `[from, to)` as a chunk. Pure. */
export function encodeChanges(changes: readonly Change[], from: number, to: number): WireChunk {
  const out: object[] = [];
  const rows: string[] = [];
  const end = Math.min(to, changes.length);
  const ends = new Uint32Array(Math.max(0, end - from));
  let at = 0;
  for (let i = from; i < end; i++) {
    const c = changes[i]!;
    // `after: 0` holds the place of the row, so a decoded change has its keys in the usual order
    if (c.after === undefined) {
      out.push({ op: c.op, kind: c.kind, id: c.id, label: c.label, fields: c.fields });
    } else {
      out.push({ op: c.op, kind: c.kind, id: c.id, label: c.label, after: 0, fields: c.fields });
      const text = JSON.stringify(c.after);
      rows.push(text);
      at += text.length;
    }
    ends[i - from] = at;
  }
  return { changes: JSON.stringify(out), rows: rows.join(''), ends };
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
  const { rows, ends } = chunk;
  if (list.length !== ends.length || (ends.length > 0 && ends[ends.length - 1] !== rows.length)) return undefined;
  const rowJson: (string | undefined)[] = new Array<string | undefined>(list.length);
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    const end = ends[i]!;
    if (end < start || (end > start) !== ('after' in c)) return undefined;
    if (end > start) {
      const text = rows.slice(start, end);
      c.after = JSON.parse(text) as Row;
      rowJson[i] = text;
    }
    start = end;
    if (c.op === 'create') continue;
    const before = rowOf(c.kind, c.id);
    if (!before) return undefined;
    c.before = before;
  }
  return { changes: list, rowJson };
}
