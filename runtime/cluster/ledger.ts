import type { Db } from '../store/db.js';

/**
 * SQLite bookkeeping of config sync: which stream messages this node applied (`cluster_applied`)
 * and which local plans still wait for the stream (`cluster_outbox`, with `cluster_outbox_parts`
 * for a message written in parts). See migrations 0005 and 0015.
 */
export class ConfigLedger {
  private readonly insApplied;
  private readonly byRevision;
  private readonly insOutbox;
  private readonly delOutbox;
  private readonly insParted;
  private readonly insPart;
  private readonly delParts;
  private readonly partsOf;
  private readonly queuedRevision;
  constructor(private readonly db: Db) {
    this.insApplied = db.prepare('INSERT INTO cluster_applied (seq, revision, origin_node, changes, applied_at) VALUES (?, ?, ?, ?, ?)');
    this.byRevision = db.prepare('SELECT seq FROM cluster_applied WHERE revision = ?');
    this.insOutbox = db.prepare('INSERT OR IGNORE INTO cluster_outbox (revision, body, created_at) VALUES (?, ?, ?)');
    this.delOutbox = db.prepare('DELETE FROM cluster_outbox WHERE revision = ?');
    this.insParted = db.prepare("INSERT INTO cluster_outbox (revision, body, created_at, parts) VALUES (?, '', ?, ?)");
    this.insPart = db.prepare('INSERT INTO cluster_outbox_parts (revision, part, text) VALUES (?, ?, ?)');
    this.delParts = db.prepare('DELETE FROM cluster_outbox_parts WHERE revision = ?');
    this.partsOf = db.prepare('SELECT text FROM cluster_outbox_parts WHERE revision = ? ORDER BY part').pluck();
    this.queuedRevision = db.prepare('SELECT 1 FROM cluster_outbox WHERE revision = ?').pluck();
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
  /**
   * Records the ledger entries a config snapshot carries (docs/cluster.md "Compaction"), entries
   * this node has already left as they are. Call inside the snapshot's apply transaction.
   */
  recordSnapshot(entries: readonly (readonly [number, string, string, number])[], now: number): void {
    const ins = this.db.prepare('INSERT OR IGNORE INTO cluster_applied (seq, revision, origin_node, changes, applied_at) VALUES (?, ?, ?, ?, ?)');
    for (const [seq, revision, node, changes] of entries) ins.run(seq, revision, node, changes, now);
  }
  /** Queues a local plan for publishing. */
  enqueue(revision: string, body: string, now: number): void {
    this.insOutbox.run(revision, body, now);
  }
  /**
   * Queues a local plan whose message is given in parts (their concatenation), as steps: a pause
   * after every few parts, so a message of tens of megabytes is written between turns of the event
   * loop. Call inside the apply transaction, which stays open across the pauses. A revision queued
   * already is left as it is (as `enqueue`'s INSERT OR IGNORE does).
   */
  *enqueueSteps(revision: string, parts: readonly string[], now: number): Generator<void, void, void> {
    if (this.queuedRevision.get(revision) !== undefined) return;
    this.insParted.run(revision, now, parts.length);
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) yield;
      this.insPart.run(revision, i, parts[i]);
    }
  }
  /** How many plans wait for the stream. */
  pendingCount(): number {
    return this.db.prepare('SELECT COUNT(*) FROM cluster_outbox').pluck().get() as number;
  }
  /** The revisions of the plans waiting for the stream, oldest first. */
  pendingRevisions(): string[] {
    return this.db.prepare('SELECT revision FROM cluster_outbox ORDER BY id').pluck().all() as string[];
  }
  /**
   * The oldest plan waiting for the stream, its message as the texts it was written in (one, or
   * its parts in order: the publisher encodes them one at a time instead of joining them).
   */
  next(): { revision: string; texts: string[] } | undefined {
    const r = this.db.prepare('SELECT revision, body, parts FROM cluster_outbox ORDER BY id LIMIT 1').get() as { revision: string; body: string; parts: number } | undefined;
    return r && { revision: r.revision, texts: r.parts > 0 ? this.partsOf.all(r.revision) as string[] : [r.body] };
  }
  /** Plans waiting whose message is one text (a canary plan's always is: `enqueue`), oldest first. */
  pendingWhole(): { revision: string; body: string }[] {
    return this.db.prepare('SELECT revision, body FROM cluster_outbox WHERE parts = 0 ORDER BY id').all() as { revision: string; body: string }[];
  }
  /** Plans waiting for the stream, oldest first (a message written in parts is put together). */
  pending(): { revision: string; body: string }[] {
    const rows = this.db.prepare('SELECT revision, body, parts FROM cluster_outbox ORDER BY id').all() as { revision: string; body: string; parts: number }[];
    return rows.map((r) => ({ revision: r.revision, body: r.parts > 0 ? (this.partsOf.all(r.revision) as string[]).join('') : r.body }));
  }
  /** Drops a plan the stream acknowledged. */
  acknowledged(revision: string): void {
    this.delOutbox.run(revision);
    this.delParts.run(revision);
  }
  /** Every applied row, oldest first (for status and tests). */
  applied(): { seq: number; revision: string; originNode: string; changes: number }[] {
    return (this.db.prepare('SELECT seq, revision, origin_node, changes FROM cluster_applied ORDER BY seq').all() as { seq: number; revision: string; origin_node: string; changes: number }[])
      .map((r) => ({ seq: r.seq, revision: r.revision, originNode: r.origin_node, changes: r.changes }));
  }
}
