import type { UniqueHolder } from '../../core/model/kinds.js';
import { claimsOf, holderOf, localHolder, takenMessage, type UniqueClaim, type UniqueKey } from '../../core/plan/unique.js';
import type { Plan } from '../../core/plan/types.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';
import { conflict } from '../errors.js';
import type { Ports } from './parts.js';

/**
 * Unique names across the nodes of a cluster (docs/cluster.md "Unique names"): before a REST write
 * that takes a unique name (a created row, or a renamed one) is applied, the name is reserved
 * cluster-wide, so of two nodes creating one name at once one gets 201 and the other the 409 its
 * own check would give. The cluster part installs the reservations (`core.ports.uniqueNames`,
 * runtime/cluster/unique-names.ts) when config sync runs; without them a write is checked against
 * the local rows only, in the same turn as its apply, as on a single node.
 */

/** What a reservation records: the row that holds the name, the node that reserved it, and when (Unix ms). */
export interface Reservation extends UniqueHolder {
  node: string;
  at: number;
}

/**
 * The answer of one reservation: held by this call (`ok`, created, or taken over from a stale
 * reservation), held by someone else (`holder`), or undefined when the cluster cannot tell now
 * (the bus is away, KV failed or did not answer in time).
 */
export type ReserveResult = { ok: true } | { ok: false; holder: Reservation } | undefined;

/** Cluster-wide reservations of unique names (KV create-if-absent). */
export interface UniqueNames {
  /**
   * Reserves `key` for the row in `value`. When another reservation exists and `stale(holder)` is
   * true, takes it over (compare-and-set on its revision).
   */
  reserve(key: UniqueKey, value: Omit<Reservation, 'node'>, stale: (holder: Reservation) => boolean): Promise<ReserveResult>;
  /** Deletes the reservation of `key` when it names row `id`; never throws. */
  release(key: UniqueKey, id: string): Promise<void>;
}

declare module './parts.js' {
  interface Ports {
    /** cluster-wide reservations of unique names; unset on a single node and without config sync */
    uniqueNames?: UniqueNames;
  }
}

/**
 * How long a reservation whose row this node does not have is still respected: a create in flight
 * on another node, or its plan on the way through the config stream. After it, the name is taken
 * over (a create that never committed: its node died between the reservation and the apply).
 */
export const RESERVATION_GRACE_MS = 300_000;

/** A reservation is stale when its row is not in `s` (nor another holder of the name) and it is older than the grace. */
export function isStale(s: Snapshot, claim: UniqueClaim, holder: Reservation, now: number, graceMs = RESERVATION_GRACE_MS): boolean {
  if (s.rows.get(claim.key.kind)?.has(holder.id)) return false;
  return now - holder.at > graceMs;
}

/** The part of the core a unique write needs. */
export interface UniqueWriter {
  holder: { current: Snapshot };
  apply: (plan: Plan) => Snapshot;
  apiRevision: () => string;
  ports: Pick<Ports, 'uniqueNames'>;
}

/** 409 when a row of `s` (other than the claimant) holds one of the names. */
function checkLocal(s: Snapshot, claims: readonly UniqueClaim[]): void {
  for (const c of claims) {
    const h = localHolder(s, c);
    if (h) throw conflict(takenMessage(c, holderOf(h)));
  }
}

/**
 * Applies the plan `build` makes (a REST write), first checking the unique names it takes against
 * the local rows (409) and, in a cluster, reserving them (409 when another node holds one). The
 * plan is made again on the snapshot current after the reservations (its local checks run again)
 * and applied in that turn. A write that then fails releases what it reserved. Row ids must be
 * chosen outside `build`, so both plans take the names for the same rows.
 */
export async function writeUnique(core: UniqueWriter, build: (s: Snapshot, revision: string) => Plan): Promise<Snapshot> {
  const revision = core.apiRevision();
  const first = build(core.holder.current, revision);
  const claims = claimsOf(first);
  checkLocal(core.holder.current, claims);
  const names = core.ports.uniqueNames;
  if (!names || claims.length === 0) return core.apply(first);
  const held: UniqueClaim[] = [];
  try {
    for (const c of claims) {
      const r = await names.reserve(c.key, { ...holderOf(c.row), at: Date.now() }, (h) => isStale(core.holder.current, c, h, Date.now()));
      if (r === undefined) continue; // the cluster cannot tell: the local check decides, as on a single node
      if (!r.ok) throw conflict(takenMessage(c, r.holder));
      held.push(c);
    }
    const s = core.holder.current;
    const plan = s.version === first.baseVersion ? first : build(s, revision);
    checkLocal(s, claimsOf(plan));
    return core.apply(plan);
  } catch (err) {
    await Promise.all(held.map((c) => names.release(c.key, c.row.id)));
    throw err;
  }
}
