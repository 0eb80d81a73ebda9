import { rowsOf, type Snapshot } from './snapshot.js';
import type { Row } from '../model/types.js';

/**
 * A lookup index over one kind's table, built lazily and cached per table object. A snapshot
 * shares a table object with the previous one until a plan touches that kind, so the index is
 * built at most once per change of the kind. When several rows share a key, the first in storage
 * order wins (the same on every node of a cluster).
 */
export function tableIndex<T extends Row>(s: Snapshot, kind: string, cache: WeakMap<object, Map<string, T>>, keyOf: (row: T) => string): ReadonlyMap<string, T> {
  const table = rowsOf<T>(s, kind);
  let idx = cache.get(table);
  if (!idx) {
    idx = new Map();
    for (const row of table.values()) {
      const k = keyOf(row);
      if (!idx.has(k)) idx.set(k, row);
    }
    cache.set(table, idx);
  }
  return idx;
}
