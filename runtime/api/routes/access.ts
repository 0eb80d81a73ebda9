import type { FastifyRequest } from 'fastify';
import type { Core } from '../../app.js';
import type { Row } from '../../model/types.js';
import { DEFAULT_TENANT } from '../../model/types.js';
import { getRow, rowsOf, type Snapshot } from '../../snapshot/snapshot.js';
import { notFound } from '../../errors.js';
import type { Principal } from '../../auth/principal.js';

/** True when the principal may see the row (own tenant; supra-tenant principals see all). */
export function visibleTo(p: Principal, row: Row): boolean {
  return p.tenantId === null || row.tenantId === p.tenantId;
}

/** The tenant new rows of this principal belong to. */
export function tenantFor(p: Principal): string {
  return p.tenantId ?? DEFAULT_TENANT;
}

/** A row by id that the caller may see, or a 404 naming what was not found. */
export function requireRow<T extends Row>(s: Snapshot, req: FastifyRequest, kind: string, id: string, label = kind): T {
  const row = getRow<T>(s, kind, id);
  if (!row || !visibleTo(req.principal, row)) throw notFound(`${label} ${id} not found`);
  return row;
}

/** Rows of a kind visible to the caller, in storage order. */
export function listVisible<T extends Row>(s: Snapshot, req: FastifyRequest, kind: string): T[] {
  const out: T[] = [];
  for (const row of rowsOf<T>(s, kind).values()) if (visibleTo(req.principal, row)) out.push(row);
  return out;
}

/** Plans and applies through the one write path, returning the new snapshot. */
export function write(core: Core, build: (s: Snapshot, revision: string) => import('../../../controller/plan/types.js').Plan) {
  const plan = build(core.holder.current, core.apiRevision());
  return core.apply(plan);
}
