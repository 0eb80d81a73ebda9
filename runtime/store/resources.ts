import type { Db } from './db.js';
import type { Row } from '../model/types.js';
import type { Plan } from '../../controller/plan/types.js';

/**
 * Resource rows in SQLite. Each row is stored as JSON in `data` with its kind, id, owner and
 * revision alongside. Rows load in insertion order so the snapshot keeps storage order.
 */
export class ResourceStore {
  private readonly put;
  private readonly del;
  private readonly rev;
  constructor(private readonly db: Db) {
    this.put = db.prepare(`INSERT INTO resources (kind, id, tenant_id, data, origin, revision, created_at, updated_at)
      VALUES (@kind, @id, @tenantId, @data, @origin, @revision, @now, @now)
      ON CONFLICT(kind, id) DO UPDATE SET tenant_id=excluded.tenant_id, data=excluded.data, origin=excluded.origin,
        revision=excluded.revision, updated_at=excluded.updated_at`);
    this.del = db.prepare('DELETE FROM resources WHERE kind = ? AND id = ?');
    this.rev = db.prepare(`INSERT INTO revisions (revision, origin, applied_at, creates, updates, deletes, meta)
      VALUES (?, ?, ?, ?, ?, ?, ?)`);
  }

  /** Every row, in insertion order. */
  loadAll(): Row[] {
    const rows = this.db.prepare('SELECT data FROM resources ORDER BY rowid').all() as { data: string }[];
    return rows.map((r) => JSON.parse(r.data) as Row);
  }

  /**
   * Writes a plan's changes and its revision record. Call inside a transaction (the applier does).
   */
  writePlan(plan: Plan, now: number, meta: Record<string, unknown> = {}): void {
    for (const c of plan.changes) {
      if (c.op === 'delete') this.del.run(c.kind, c.id);
      else {
        const row = c.after!;
        this.put.run({ kind: row.kind, id: row.id, tenantId: row.tenantId, data: JSON.stringify(row), origin: row.origin, revision: row.revision, now });
      }
    }
    this.rev.run(plan.revision, plan.origin, now, plan.counts.create, plan.counts.update, plan.counts.delete, JSON.stringify(meta));
  }

  /** Runs `fn` in one SQLite transaction. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
