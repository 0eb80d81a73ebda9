import type { Db } from '../../runtime/store/db.js';
import { rowsSeqOf } from '../../core/store/resources.js';
import { emptySnapshot, nextSnapshot, type Snapshot } from '../../core/snapshot/snapshot.js';
import type { Row } from '../../core/model/types.js';
import { planMutations } from '../../core/apply/apply.js';
import type { Plan } from '../../core/plan/types.js';

/** The rows of the database as a Snapshot, and the state (`rowsSeqOf`) they are. */
export interface DbView { seq: number; snapshot: Snapshot }

/**
 * The offload worker's view of the running state (docs/gitops.md "Off the DNS thread"): the rows
 * of the `resources` table, read on its own connection in one read transaction together with
 * `rowsSeqOf`, so the view names exactly the committed state it holds (WAL readers see only
 * committed transactions, and every plan commits its rows and its revision record together).
 * The view is kept while the state does not move. When the only newer revision is the plan this
 * worker made last (same revision and plan id), that plan is laid over the view instead of
 * reading every row again, the common case of one reconcile after another; any other change
 * (a REST write, a plan from the config stream) reads the rows again.
 */
export class DbState {
  private view: DbView | undefined;
  private expected: { baseSeq: number; plan: Plan } | undefined;
  /** how many times the rows were read whole (tests and logs) */
  reads = 0;

  constructor(private readonly db: Db) {}

  /** The current committed state. Errors: whatever SQLite throws. */
  read(): DbView {
    return this.db.transaction(() => this.readInTransaction())();
  }

  /** Remembers the plan just made against `baseSeq`: if it is applied next, `read` lays it over the view. */
  expect(baseSeq: number, plan: Plan): void {
    this.expected = plan.changes.length > 0 ? { baseSeq, plan } : undefined;
  }

  private readInTransaction(): DbView {
    const seq = rowsSeqOf(this.db);
    const view = this.view;
    if (view && view.seq === seq) return view;
    const exp = this.expected;
    this.expected = undefined;
    if (view && exp && exp.baseSeq === view.seq) {
      const newer = this.db.prepare('SELECT seq, revision, meta FROM revisions WHERE seq > ? AND creates + updates + deletes > 0 ORDER BY seq LIMIT 2')
        .all(view.seq) as { seq: number; revision: string; meta: string }[];
      const only = newer.length === 1 ? newer[0]! : undefined;
      if (only && only.seq === seq && only.revision === exp.plan.revision && planIdOf(only.meta) === exp.plan.id) {
        this.view = { seq, snapshot: nextSnapshot(view.snapshot, planMutations(exp.plan), exp.plan.revision, Date.now()) };
        return this.view;
      }
    }
    const rows = this.db.prepare('SELECT data FROM resources ORDER BY rowid').all() as { data: string }[];
    const puts = rows.map((r) => ({ op: 'put' as const, row: JSON.parse(r.data) as Row }));
    this.reads++;
    this.view = { seq, snapshot: nextSnapshot(emptySnapshot(), puts, '', Date.now()) };
    return this.view;
  }
}

function planIdOf(meta: string): unknown {
  try { return (JSON.parse(meta) as { planId?: unknown }).planId; } catch { return undefined; }
}
