import type { Db } from '../store/db.js';

/**
 * SQLite bookkeeping of config sync: which stream messages this node applied (`cluster_applied`)
 * and which local plans still wait for the stream (`cluster_outbox`). See migration 0005.
 */
export class ConfigLedger {
  private readonly insApplied;
  private readonly byRevision;
  private readonly insOutbox;
  private readonly delOutbox;
  constructor(private readonly db: Db) {
    this.insApplied = db.prepare('INSERT INTO cluster_applied (seq, revision, origin_node, changes, applied_at) VALUES (?, ?, ?, ?, ?)');
    this.byRevision = db.prepare('SELECT seq FROM cluster_applied WHERE revision = ?');
    this.insOutbox = db.prepare('INSERT OR IGNORE INTO cluster_outbox (revision, body, created_at) VALUES (?, ?, ?)');
    this.delOutbox = db.prepare('DELETE FROM cluster_outbox WHERE revision = ?');
  }
  /** Highest stream sequence applied here; 0 when none. */
  lastSeq(): number {
    return (this.db.prepare('SELECT MAX(seq) AS s FROM cluster_applied').get() as { s: number | null }).s ?? 0;
  }
  /** The revision of the last applied stream message, or ''. */
  lastRevision(): string {
    return (this.db.prepare('SELECT revision FROM cluster_applied ORDER BY seq DESC LIMIT 1').get() as { revision: string } | undefined)?.revision ?? '';
  }
  /** Stream sequence at which `revision` was applied, or undefined. */
  seqOf(revision: string): number | undefined {
    return (this.byRevision.get(revision) as { seq: number } | undefined)?.seq;
  }
  /** Records an applied (or skipped-as-duplicate-free no-op) stream message. Call inside the apply transaction. */
  recordApplied(seq: number, revision: string, originNode: string, changes: number, now: number): void {
    this.insApplied.run(seq, revision, originNode, changes, now);
  }
  /** Queues a local plan for publishing. */
  enqueue(revision: string, body: string, now: number): void {
    this.insOutbox.run(revision, body, now);
  }
  /** Plans waiting for the stream, oldest first. */
  pending(): { revision: string; body: string }[] {
    return this.db.prepare('SELECT revision, body FROM cluster_outbox ORDER BY id').all() as { revision: string; body: string }[];
  }
  /** Drops a plan the stream acknowledged. */
  acknowledged(revision: string): void {
    this.delOutbox.run(revision);
  }
  /** Every applied row, oldest first (for status and tests). */
  applied(): { seq: number; revision: string; originNode: string; changes: number }[] {
    return (this.db.prepare('SELECT seq, revision, origin_node, changes FROM cluster_applied ORDER BY seq').all() as { seq: number; revision: string; origin_node: string; changes: number }[])
      .map((r) => ({ seq: r.seq, revision: r.revision, originNode: r.origin_node, changes: r.changes }));
  }
}
