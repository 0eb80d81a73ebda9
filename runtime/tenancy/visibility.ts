import type { Row } from '../../core/model/types.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { getRow, rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { notFound } from '../errors.js';

/** Who is looking (a principal, runtime/ports/principal.ts): only the tenant matters (null: supra-tenant). */
export interface Viewer { tenantId: string | null }

/** True when the principal may see the row (own tenant; supra-tenant principals see all). */
export function visibleTo(p: Viewer, row: Row): boolean {
  return p.tenantId === null || row.tenantId === p.tenantId;
}

/** The tenant new rows of this principal belong to. */
export function tenantFor(p: Viewer): string {
  return p.tenantId ?? DEFAULT_TENANT;
}

/** A row by id that the caller may see, or a 404 naming what was not found. */
export function requireRow<T extends Row>(s: Snapshot, viewer: Viewer, kind: string, id: string, label = kind): T {
  const row = getRow<T>(s, kind, id);
  if (!row || !visibleTo(viewer, row)) throw notFound(`${label} ${id} not found`);
  return row;
}

/** Rows of a kind visible to the caller, in storage order. */
export function listVisible<T extends Row>(s: Snapshot, viewer: Viewer, kind: string): T[] {
  const out: T[] = [];
  for (const row of rowsOf<T>(s, kind).values()) if (visibleTo(viewer, row)) out.push(row);
  return out;
}
