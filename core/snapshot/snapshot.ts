import { kindInfo } from '../model/kinds.js';
import type { Row, ServiceRow } from '../model/types.js';
import { ChunkedMap, type ChunkedMapBuilder } from './chunked-map.js';

/**
 * The immutable runtime view that every reader uses (DNS, API GETs, health, WebSocket). A new
 * Snapshot is built off to the side from the previous one plus a plan's changes, sharing untouched
 * maps, and swapped in with one assignment. Never mutate a Snapshot or anything reachable from it.
 */
export interface Snapshot {
  readonly version: number;
  /** last revision applied, any origin */
  readonly revision: string;
  readonly rows: ReadonlyMap<string, ReadonlyMap<string, Row>>;
  /** parent id → child kind → children in storage order */
  readonly children: ReadonlyMap<string, ReadonlyMap<string, readonly Row[]>>;
  /** lower-cased FQDN → service */
  readonly serviceByDomain: ReadonlyMap<string, ServiceRow>;
  readonly builtAt: number;
}

/** One row-level mutation, as derived from a plan change. */
export type RowMutation = { op: 'put'; row: Row } | { op: 'delete'; kind: string; id: string };

const EMPTY_ROWS: ReadonlyMap<string, Row> = new Map();
const EMPTY_CHILDREN: readonly Row[] = [];

/** The empty snapshot (version 0). */
export function emptySnapshot(): Snapshot {
  return { version: 0, revision: '', rows: new Map(), children: ChunkedMap.empty(), serviceByDomain: ChunkedMap.empty(), builtAt: 0 };
}

const asChunked = <V>(m: ReadonlyMap<string, V> | undefined): ChunkedMap<V> =>
  m instanceof ChunkedMap ? (m as ChunkedMap<V>) : ChunkedMap.from<V>(m ?? []);

/** All rows of a kind, in storage order. */
export function rowsOf<T extends Row = Row>(s: Snapshot, kind: string): ReadonlyMap<string, T> {
  return (s.rows.get(kind) ?? EMPTY_ROWS) as ReadonlyMap<string, T>;
}

/** One row by kind and id, or undefined. */
export function getRow<T extends Row = Row>(s: Snapshot, kind: string, id: string): T | undefined {
  return s.rows.get(kind)?.get(id) as T | undefined;
}

/** Children of a parent row of one kind, in storage order. */
export function childrenOf<T extends Row = Row>(s: Snapshot, parentId: string, kind: string): readonly T[] {
  return (s.children.get(parentId)?.get(kind) ?? EMPTY_CHILDREN) as readonly T[];
}

/**
 * Builds the next snapshot from `prev` and row mutations. Pure apart from `now`. Only the maps of
 * touched kinds and parents are copied; everything else is shared with `prev`.
 */
export function nextSnapshot(prev: Snapshot, muts: readonly RowMutation[], revision: string, now: number): Snapshot {
  const b = new SnapshotBuilder(prev);
  for (const m of muts) b.apply(m);
  return b.build(revision, now);
}

/**
 * The next snapshot under construction, off to the side: mutations can be laid over `prev` a few at
 * a time (a large apply builds it in slices between turns of the event loop, docs/architecture.md
 * "Large applies"), and `build` returns the immutable result. `prev` is never changed; `build`
 * costs in proportion to the tables touched, not to the rows.
 */
export class SnapshotBuilder {
  private readonly tables = new Map<string, ChunkedMapBuilder<Row>>();
  private readonly children: ChunkedMapBuilder<ReadonlyMap<string, readonly Row[]>>;
  private readonly copiedParents = new Map<string, Map<string, Row[]>>();
  private services: ChunkedMapBuilder<ServiceRow> | undefined;

  constructor(private readonly prev: Snapshot) {
    this.children = asChunked(prev.children).builder();
  }

  private kindMap(kind: string): ChunkedMapBuilder<Row> {
    let b = this.tables.get(kind);
    if (!b) this.tables.set(kind, (b = asChunked(this.prev.rows.get(kind)).builder()));
    return b;
  }

  private childList(parentId: string, kind: string): Row[] {
    let byKind = this.copiedParents.get(parentId);
    if (!byKind) {
      byKind = new Map();
      for (const [k, list] of this.prev.children.get(parentId) ?? []) byKind.set(k, [...list]);
      this.copiedParents.set(parentId, byKind);
      this.children.set(parentId, byKind);
    }
    let list = byKind.get(kind);
    if (!list) byKind.set(kind, (list = []));
    return list;
  }

  private serviceMap(): ChunkedMapBuilder<ServiceRow> {
    return (this.services ??= asChunked(this.prev.serviceByDomain).builder());
  }

  /** Lays one mutation over the rows so far. */
  apply(m: RowMutation): void {
    const kind = m.op === 'put' ? m.row.kind : m.kind;
    const id = m.op === 'put' ? m.row.id : m.id;
    const map = this.kindMap(kind);
    const old = map.get(id);
    const oldParent = parentIdOf(old);
    if (oldParent !== undefined) {
      const list = this.childList(oldParent, kind);
      const i = list.findIndex((r) => r.id === id);
      if (m.op === 'put' && parentIdOf(m.row) === oldParent && i >= 0) list[i] = m.row;
      else if (i >= 0) list.splice(i, 1);
    }
    if (kind === 'service' && old) this.serviceMap().delete(String((old as ServiceRow).domain).toLowerCase());
    if (m.op === 'delete') {
      map.delete(id);
      this.children.delete(id);
      this.copiedParents.delete(id);
      return;
    }
    map.set(id, m.row);
    const newParent = parentIdOf(m.row);
    if (newParent !== undefined && newParent !== oldParent) this.childList(newParent, kind).push(m.row);
    if (kind === 'service') this.serviceMap().set((m.row as ServiceRow).domain.toLowerCase(), m.row as ServiceRow);
  }

  /** The snapshot after every mutation applied so far, one version after `prev`. */
  build(revision: string, now: number): Snapshot {
    const prev = this.prev;
    const rows = new Map(prev.rows);
    for (const [kind, b] of this.tables) rows.set(kind, b.build());
    return {
      version: prev.version + 1,
      revision,
      rows,
      children: this.children.build(),
      serviceByDomain: this.services ? this.services.build() : prev.serviceByDomain,
      builtAt: now,
    };
  }
}

/** The id of a row's parent (a member's pool), or undefined for a row of a kind without one. */
function parentIdOf(row: Row | undefined): string | undefined {
  if (!row) return undefined;
  const p = kindInfo(row.kind).parent;
  return p ? ((row as Record<string, unknown>)[p.field] as string) : undefined;
}
