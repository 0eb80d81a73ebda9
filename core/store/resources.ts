import type { Db } from '../../runtime/store/db.js';
import type { Row } from '../model/types.js';
import type { Change, Plan } from '../plan/types.js';

/**
 * The `seq` of the newest revision that changed rows (0 before any): the state of the
 * `resources` table is named by it, since only applied plans write rows and each records a
 * revision in the same transaction (empty recorded revisions change no row and are skipped).
 * Another connection that reads it and the rows in one read transaction knows which applied
 * state it saw (gitops/offload/).
 */
export function rowsSeqOf(db: Db): number {
  // newest first: the scan stops at the first revision that changed rows
  const r = db.prepare('SELECT seq FROM revisions WHERE creates + updates + deletes > 0 ORDER BY seq DESC LIMIT 1').get() as { seq: number } | undefined;
  return r?.seq ?? 0;
}

/** A transaction open across turns of the event loop (ResourceStore.begin). */
export interface OpenTransaction {
  /** Commits. With `deferCheckpoint`, the automatic WAL checkpoint stays off until `ResourceStore.resumeCheckpoints()`. */
  commit(deferCheckpoint?: boolean): void;
  /** Rolls back (nothing when already ended). */
  rollback(): void;
}

/**
 * Resource rows in SQLite. Each row is stored as JSON in `data` with its kind, id, owner and
 * revision alongside. Rows load in insertion order so the snapshot keeps storage order.
 */
export class ResourceStore {
  private readonly put;
  private readonly del;
  private readonly rev;
  /** the connection's wal_autocheckpoint while it is switched off, and how many commits deferred it */
  private autoCheckpoint: number | undefined;
  private deferred = 0;
  constructor(private readonly db: Db) {
    // positional parameters: binding by name cost about a quarter more per row
    this.put = db.prepare(`INSERT INTO resources (kind, id, tenant_id, data, origin, revision, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
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
   * Returns the revision record's `seq`.
   */
  writePlan(plan: Plan, now: number, meta: Record<string, unknown> = {}): number {
    this.writeChanges(plan.changes, 0, plan.changes.length, now);
    return this.writeRevision(plan, now, meta);
  }

  /**
   * Writes changes `[from, to)` of a plan's list. Call inside a transaction. `rowJson[i]`, when
   * given, is `JSON.stringify` of `changes[i].after` made already (gitops/offload/plan-wire.ts):
   * stored as it is.
   */
  writeChanges(changes: readonly Change[], from: number, to: number, now: number, rowJson?: readonly (string | undefined)[]): void {
    for (let i = from; i < to; i++) {
      const c = changes[i]!;
      if (c.op === 'delete') this.del.run(c.kind, c.id);
      else {
        const row = c.after!;
        this.put.run(row.kind, row.id, row.tenantId, rowJson?.[i] ?? JSON.stringify(row), row.origin, row.revision, now, now);
      }
    }
  }

  /** Writes a plan's revision record (also for an empty plan). Call inside a transaction. Returns its `seq`. */
  writeRevision(plan: Plan, now: number, meta: Record<string, unknown> = {}): number {
    const r = this.rev.run(plan.revision, plan.origin, now, plan.counts.create, plan.counts.update, plan.counts.delete, JSON.stringify(meta));
    return Number(r.lastInsertRowid);
  }

  /** Runs `fn` in one SQLite transaction. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /**
   * Opens a transaction that stays open across turns of the event loop, for a large plan written
   * in slices (core/apply/apply-sliced.ts). Whatever else runs statements on this connection
   * before it ends joins it (callers hold the write gate, so no other plan does). Errors: throws
   * when a transaction is open already.
   */
  begin(): OpenTransaction {
    if (this.db.inTransaction) throw new Error('a transaction is open already');
    this.db.exec('BEGIN IMMEDIATE');
    let open = true;
    return {
      commit: (deferCheckpoint = false) => {
        if (!open) return;
        // A large commit leaves a large WAL; the automatic checkpoint would copy it into the
        // database right here, on the DNS thread. Deferred, another connection does it.
        if (deferCheckpoint) this.deferCheckpoints();
        this.db.exec('COMMIT');
        open = false;
      },
      rollback: () => {
        if (!open) return;
        open = false;
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      },
    };
  }

  /** Switches the connection's automatic WAL checkpoint off until `resumeCheckpoints()` (counted). */
  private deferCheckpoints(): void {
    if (this.deferred++ === 0) {
      this.autoCheckpoint = this.db.pragma('wal_autocheckpoint', { simple: true }) as number;
      this.db.pragma('wal_autocheckpoint = 0');
    }
  }

  /** Ends one `commit(true)`'s deferral; the last one switches the automatic checkpoint back on. */
  resumeCheckpoints(): void {
    if (this.deferred === 0) return;
    if (--this.deferred === 0) this.db.pragma(`wal_autocheckpoint = ${this.autoCheckpoint ?? 1000}`);
  }
}
