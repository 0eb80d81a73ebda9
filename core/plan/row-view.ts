import { kindInfo } from '../model/kinds.js';
import { fieldOf, type Row } from '../model/types.js';
import { getRow, rowsOf, type Snapshot } from '../snapshot/snapshot.js';

const keyOf = (kind: string, id: string) => `${kind}/${id}`;

/** The id of a row's parent (a member's pool), or undefined for a kind without a parent. */
export function parentIdOf(row: Row): unknown {
  const p = kindInfo(row.kind).parent;
  return p ? fieldOf(row, p.field) : undefined;
}

/**
 * The rows a planner reads: a snapshot, with the plan's own changes so far laid over it. Planning
 * a REST delete reads a bare snapshot; rebasing a stream plan (rebase.ts) lays each effective
 * change over it, so later changes see earlier ones, creates included. Never mutates the snapshot.
 */
export class RowView {
  /** `${kind}/${id}` → row after the changes so far; null = deleted */
  private readonly over = new Map<string, Row | null>();

  constructor(readonly snapshot: Snapshot) {}

  /** One row by kind and id as it stands, or undefined when absent or deleted. */
  get(kind: string, id: string): Row | undefined {
    const k = keyOf(kind, id);
    if (this.over.has(k)) return this.over.get(k) ?? undefined;
    return getRow(this.snapshot, kind, id);
  }

  /** Lays a created or updated row over the snapshot. */
  put(row: Row): void {
    this.over.set(keyOf(row.kind, row.id), row);
  }

  /** Marks a row deleted. */
  remove(kind: string, id: string): void {
    this.over.set(keyOf(kind, id), null);
  }

  /** Every present row of a kind: the snapshot's in storage order as they stand, then new ones. */
  rowsOf(kind: string): Iterable<Row> {
    const base = rowsOf(this.snapshot, kind);
    if (this.over.size === 0) return base.values();
    const out: Row[] = [];
    for (const row of base.values()) {
      const cur = this.get(kind, row.id);
      if (cur) out.push(cur);
    }
    for (const row of this.over.values()) if (row && row.kind === kind && !base.has(row.id)) out.push(row);
    return out;
  }

  /**
   * The present rows whose parent is `parentId` (a pool's check, members and rules): the
   * snapshot's children as they stand, then rows of this plan that name it as parent.
   */
  childrenOf(parentId: string): Row[] {
    const out: Row[] = [];
    const seen = new Set<string>();
    for (const list of this.snapshot.children.get(parentId)?.values() ?? []) {
      for (const child of list) {
        seen.add(keyOf(child.kind, child.id));
        const cur = this.over.size === 0 ? child : this.get(child.kind, child.id);
        if (cur && parentIdOf(cur) === parentId) out.push(cur);
      }
    }
    for (const [k, row] of this.over) if (row && !seen.has(k) && parentIdOf(row) === parentId) out.push(row);
    return out;
  }
}
