import type { Db } from '../../store/db.js';

/** Where a delivery stands: waiting, in flight, done, waiting for its next attempt, or given up. */
export type DeliveryState = 'pending' | 'sending' | 'sent' | 'retrying' | 'failed';

/** One row of the queue (`form_deliveries`). */
export interface DeliveryRow {
  id: number;
  submission_id: number;
  form_id: string;
  action_id: string;
  event: string;
  state: DeliveryState;
  attempts: number;
  next_at: number;
  last_error: string | null;
  last_status: number | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
}

/**
 * The delivery queue (docs/forms.md "Deliveries"): every delivery is a row that moves pending →
 * sending → sent, or → retrying (with its next time) → … → failed. A row is marked `sending`
 * before its request goes out and settled after, so a restart finds the rows that were in flight
 * and sends them again (at least once; `webhook-id` is stable, so receivers drop a repeat).
 * Also each action's run of consecutive failed attempts, which pauses an action that keeps failing.
 */
export class Outbox {
  constructor(private readonly db: Db) {}

  /** Rows in flight when the process stopped go back to the queue, due now. Returns how many. */
  recover(now: number): number {
    return this.db.prepare("UPDATE form_deliveries SET state = 'retrying', next_at = ?, updated_at = ? WHERE state = 'sending'").run(now, now).changes;
  }

  /** Due rows, oldest first, each marked `sending` with its attempt counted (one transaction). */
  take(now: number, limit: number): DeliveryRow[] {
    return this.db.transaction(() => {
      const rows = this.db.prepare("SELECT * FROM form_deliveries WHERE state IN ('pending', 'retrying') AND next_at <= ? ORDER BY next_at, id LIMIT ?").all(now, limit) as DeliveryRow[];
      const mark = this.db.prepare("UPDATE form_deliveries SET state = 'sending', attempts = attempts + 1, updated_at = ? WHERE id = ?");
      for (const r of rows) { mark.run(now, r.id); r.state = 'sending'; r.attempts++; }
      return rows;
    })();
  }

  /** The earliest time a row becomes due, or undefined when none waits. */
  nextDue(): number | undefined {
    const r = this.db.prepare("SELECT MIN(next_at) AS t FROM form_deliveries WHERE state IN ('pending', 'retrying')").get() as { t: number | null };
    return r.t ?? undefined;
  }

  sent(id: number, status: number | null, now: number): void {
    this.db.prepare("UPDATE form_deliveries SET state = 'sent', last_status = ?, last_error = NULL, sent_at = ?, updated_at = ? WHERE id = ?").run(status, now, now, id);
  }

  retryAt(id: number, error: string, status: number | null, at: number, now: number): void {
    this.db.prepare("UPDATE form_deliveries SET state = 'retrying', last_error = ?, last_status = ?, next_at = ?, updated_at = ? WHERE id = ?").run(error, status, at, now, id);
  }

  failed(id: number, error: string, status: number | null, now: number): void {
    this.db.prepare("UPDATE form_deliveries SET state = 'failed', last_error = ?, last_status = ?, updated_at = ? WHERE id = ?").run(error, status, now, id);
  }

  /** Drops a row whose action or submission is gone. */
  drop(id: number): void {
    this.db.prepare('DELETE FROM form_deliveries WHERE id = ?').run(id);
  }

  /** Puts an action's failed deliveries back in the queue, due now, their attempts reset. Returns how many. */
  requeueFailed(actionId: string, now: number): number {
    return this.db.prepare("UPDATE form_deliveries SET state = 'pending', attempts = 0, next_at = ?, updated_at = ? WHERE action_id = ? AND state = 'failed'").run(now, now, actionId).changes;
  }

  /** One page of an action's deliveries, newest first, and how many there are. */
  log(actionId: string, page: number, limit: number, state?: DeliveryState): { rows: DeliveryRow[]; total: number } {
    const where = state ? 'action_id = ? AND state = ?' : 'action_id = ?';
    const args = state ? [actionId, state] : [actionId];
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM form_deliveries WHERE ${where}`).get(...args) as { n: number }).n;
    const rows = this.db.prepare(`SELECT * FROM form_deliveries WHERE ${where} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...args, limit, (page - 1) * limit) as DeliveryRow[];
    return { rows, total };
  }

  /** Deletes an action's deliveries and failure run (the action was deleted). */
  removeAction(actionId: string): void {
    this.db.prepare('DELETE FROM form_deliveries WHERE action_id = ?').run(actionId);
    this.db.prepare('DELETE FROM form_action_failures WHERE action_id = ?').run(actionId);
  }

  /** Counts a failed attempt of an action; returns its run of consecutive failures. */
  noteFailure(actionId: string, error: string): number {
    return (this.db.prepare(`INSERT INTO form_action_failures (action_id, consecutive, last_error) VALUES (?, 1, ?)
      ON CONFLICT (action_id) DO UPDATE SET consecutive = consecutive + 1, last_error = excluded.last_error RETURNING consecutive`).get(actionId, error) as { consecutive: number }).consecutive;
  }

  /** A successful attempt ends the action's run of failures. */
  noteSuccess(actionId: string): void {
    this.db.prepare('UPDATE form_action_failures SET consecutive = 0, paused_at = NULL WHERE action_id = ? AND consecutive > 0').run(actionId);
  }

  /** Records that the action was paused (once per run); false when it already was. */
  notePaused(actionId: string, at: number): boolean {
    return this.db.prepare('UPDATE form_action_failures SET paused_at = ? WHERE action_id = ? AND paused_at IS NULL').run(at, actionId).changes === 1;
  }

  /** Clears an action's run of failures (it was enabled again). */
  resetFailures(actionId: string): void {
    this.db.prepare('DELETE FROM form_action_failures WHERE action_id = ?').run(actionId);
  }
}
