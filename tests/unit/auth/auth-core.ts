import { openDatabase, type Db } from '../../../runtime/store/db.js';
import { ResourceStore } from '../../../core/store/resources.js';
import { EventBus } from '../../../core/events/bus.js';
import { SnapshotHolder, applyPlan } from '../../../core/apply/apply.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import type { Plan } from '../../../core/plan/types.js';
import type { RowWriter } from '../../../runtime/app.js';

/** The slice of the core the auth stores use, over a database whose rows are loaded as at start. */
export interface TestAuthCore extends RowWriter { db: Db; store: ResourceStore; bus: EventBus; applied: Plan[] }

/** An auth core over `db` (default: a fresh in-memory database); every applied plan is recorded. */
export function authCore(db: Db = openDatabase(':memory:')): TestAuthCore {
  const store = new ResourceStore(db);
  const holder = new SnapshotHolder(nextSnapshot(emptySnapshot(), store.loadAll().map((row) => ({ op: 'put' as const, row })), '', 0));
  const bus = new EventBus();
  const applied: Plan[] = [];
  let n = 0;
  return {
    db, store, bus, holder, applied,
    apply: (plan, opts) => { const s = applyPlan({ store, holder, bus }, plan, opts); applied.push(plan); return s; },
    apiRevision: () => `api:test-${++n}`,
  };
}
