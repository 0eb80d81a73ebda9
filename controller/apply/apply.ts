import type { Plan } from '../plan/types.js';
import { nextSnapshot, type RowMutation, type Snapshot } from '../../runtime/snapshot/snapshot.js';
import type { ResourceStore } from '../../runtime/store/resources.js';
import type { EventBus } from '../../runtime/events/bus.js';
import { GslbError, conflict } from '../../runtime/errors.js';
import { planEvents } from './events.js';

/** Holds the current Snapshot. Readers take `current` once per request or query and keep it. */
export class SnapshotHolder {
  constructor(public current: Snapshot) {}
}

export interface ApplyContext {
  store: ResourceStore;
  holder: SnapshotHolder;
  bus: EventBus;
  now?: () => number;
}

export interface ApplyOptions {
  /** apply an unsafe plan anyway (octoDNS `--force`) */
  force?: boolean;
  /** extra data recorded with the revision (signer, author, message…) */
  meta?: Record<string, unknown>;
}

/** Converts plan changes to row mutations. */
export function planMutations(plan: Plan): RowMutation[] {
  return plan.changes.map((c) => (c.op === 'delete' ? { op: 'delete', kind: c.kind, id: c.id } : { op: 'put', row: c.after! }));
}

/**
 * The one write path (DESIGN decision 1). Builds the next Snapshot off to the side, then in one
 * turn of the event loop commits the SQLite transaction and swaps the snapshot reference. A failed
 * commit discards the new snapshot and leaves everything as it was. Events are emitted after the
 * swap. Errors: 409 when the plan was computed against an older snapshot; CTRL_STALLED when the
 * plan is unsafe and not forced; STORE_FAILED when the transaction fails.
 */
export function applyPlan(ctx: ApplyContext, plan: Plan, opts: ApplyOptions = {}): Snapshot {
  const prev = ctx.holder.current;
  if (plan.baseVersion !== prev.version) {
    throw conflict(`plan ${plan.revision} was computed against snapshot ${plan.baseVersion}, current is ${prev.version}; plan again`);
  }
  if (!plan.safety.safe && !opts.force) {
    throw new GslbError('CTRL_STALLED', plan.safety.message ?? 'plan is unsafe', { extra: { reason: plan.safety.reason } });
  }
  if (plan.changes.length === 0) return prev;
  const now = (ctx.now ?? Date.now)();
  const next = nextSnapshot(prev, planMutations(plan), plan.revision, now);
  try {
    ctx.store.transaction(() => ctx.store.writePlan(plan, now, opts.meta));
  } catch (err) {
    throw new GslbError('STORE_FAILED', `applying ${plan.revision} failed; nothing changed: ${(err as Error).message}`, { cause: err });
  }
  ctx.holder.current = next;
  ctx.bus.emit('plan_applied', { plan, snapshot: next, previous: prev });
  for (const msg of planEvents(plan)) ctx.bus.emit('ws_message', msg);
  return next;
}
