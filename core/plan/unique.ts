import { kindInfo, type UniqueHolder } from '../model/kinds.js';
import { fieldOf, type Row } from '../model/types.js';
import { rowsOf, type Snapshot } from '../snapshot/snapshot.js';
import type { Plan } from './types.js';

/**
 * Unique names of a plan (docs/cluster.md "Unique names"). A row kind declares the name its rows
 * hold alone (`KindInfo.unique`, core/model/kinds.ts); these pure functions say which names a plan
 * takes (creates, and updates that change the name) and which it gives up (deletes, and those
 * updates), so one reservation step can run before any REST write. Pure.
 */

/** One unique name: the kind, its scope (a tenant id, or '' across tenants) and the normalised name. */
export interface UniqueKey {
  kind: string;
  scope: string;
  name: string;
}

/** A name a plan takes or frees, with the row that takes or held it. */
export interface UniqueClaim {
  key: UniqueKey;
  row: Row;
}

const same = (a: UniqueKey | undefined, b: UniqueKey | undefined) => a !== undefined && b !== undefined && a.scope === b.scope && a.name === b.name;

/** The unique name `row` holds, or undefined (its kind declares none, or the row holds none). */
export function uniqueKeyOf(row: Row): UniqueKey | undefined {
  const u = kindInfo(row.kind).unique?.of(row);
  return u ? { kind: row.kind, ...u } : undefined;
}

/** The names the plan takes: of its created rows, and of updated rows whose name changes. */
export function claimsOf(plan: Plan): UniqueClaim[] {
  const out: UniqueClaim[] = [];
  for (const c of plan.changes) {
    if (c.op === 'delete' || !c.after) continue;
    const key = uniqueKeyOf(c.after);
    if (key && !(c.op === 'update' && c.before && same(uniqueKeyOf(c.before), key))) out.push({ key, row: c.after });
  }
  return out;
}

/** The names the plan gives up: of its deleted rows, and the old names of updated rows whose name changes. */
export function freedOf(plan: Plan): UniqueClaim[] {
  const out: UniqueClaim[] = [];
  for (const c of plan.changes) {
    if (c.op === 'create' || !c.before) continue;
    const key = uniqueKeyOf(c.before);
    if (key && !(c.op === 'update' && c.after && same(uniqueKeyOf(c.after), key))) out.push({ key, row: c.before });
  }
  return out;
}

/** The row (other than the claimant) that holds the claimed name in `s`, or undefined. Linear in the rows of the kind. */
export function localHolder(s: Snapshot, claim: UniqueClaim): Row | undefined {
  for (const r of rowsOf(s, claim.key.kind).values()) {
    if (r.id !== claim.row.id && same(uniqueKeyOf(r), claim.key)) return r;
  }
  return undefined;
}

/** What a reservation records of the row holding a name. */
export function holderOf(row: Row): UniqueHolder {
  return { id: row.id, tenantId: row.tenantId, rowName: String(fieldOf(row, 'name') ?? '') };
}

/** The 409 message a claimant gets while `holder` has the name (the kind's own wording). */
export function takenMessage(claim: UniqueClaim, holder: UniqueHolder): string {
  return kindInfo(claim.key.kind).unique!.taken(claim.row, holder);
}
