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
  /** the key every node of a cluster gives this delivery (`<seq>.<submission>.<action>`), null on a node on its own */
  cluster_key: string | null;
}

/** A delivery's outcome as the node that sent it tells the others (docs/forms.md "In a cluster"). */
export interface SettledDelivery {
  state: 'sent' | 'retrying' | 'failed';
  attempts: number;
  status: number | null;
  error: string | null;
  nextAt: number;
  sentAt: number | null;
}

/** How one attempt ended: still in flight, delivered, failed, or cut off by a stop of the node. */
export type AttemptOutcome = 'sending' | 'sent' | 'failed' | 'interrupted';

/** One attempt of a delivery (`form_delivery_attempts`). */
export interface AttemptRow {
  delivery_id: number;
  /** 1-based over the delivery's whole history (a retry of a failed delivery goes on counting) */
  n: number;
  started_at: number;
  outcome: AttemptOutcome;
  duration_ms: number | null;
  status: number | null;
  error: string | null;
}

/** How many attempts of one delivery are kept (the oldest go first). */
export const ATTEMPTS_KEPT = 50;

/** How an attempt ended, as the worker settles it. */
export interface AttemptResult { status: number | null; error: string | null; durationMs: number }

/**
 * The delivery queue (docs/forms.md "Deliveries"): every delivery is a row that moves pending →
 * sending → sent, or → retrying (with its next time) → … → failed. A row is marked `sending`
 * before its request goes out and settled after, so a restart finds the rows that were in flight
 * and sends them again (at least once; `webhook-id` is stable, so receivers drop a repeat).
 * Every attempt is a row of its own (`form_delivery_attempts`): made when the row is taken and
 * settled with the row, so the history matches the `attempts` count. Also each action's run of
 * consecutive failed attempts, which pauses an action that keeps failing.
 */
export class Outbox {
  constructor(private readonly db: Db) {}

  /** Rows in flight when the process stopped go back to the queue, due now, their attempts marked interrupted. Returns how many. */
  recover(now: number): number {
    return this.db.transaction(() => {
      this.db.prepare(`UPDATE form_delivery_attempts SET outcome = 'interrupted', error = 'the node stopped before the attempt ended; it is made again'
        WHERE outcome = 'sending' AND delivery_id IN (SELECT id FROM form_deliveries WHERE state = 'sending')`).run();
      return this.db.prepare("UPDATE form_deliveries SET state = 'retrying', next_at = ?, updated_at = ? WHERE state = 'sending'").run(now, now).changes;
    })();
  }

  /** Due rows, oldest first, each marked `sending` with its attempt counted and recorded (one transaction). */
  take(now: number, limit: number): DeliveryRow[] {
    return this.db.transaction(() => {
      const rows = this.db.prepare("SELECT * FROM form_deliveries WHERE state IN ('pending', 'retrying') AND next_at <= ? ORDER BY next_at, id LIMIT ?").all(now, limit) as DeliveryRow[];
      const mark = this.db.prepare("UPDATE form_deliveries SET state = 'sending', attempts = attempts + 1, updated_at = ? WHERE id = ?");
      const attempt = this.db.prepare(`INSERT INTO form_delivery_attempts (delivery_id, n, started_at)
        VALUES (?, (SELECT COALESCE(MAX(n), 0) + 1 FROM form_delivery_attempts WHERE delivery_id = ?), ?) RETURNING n`);
      const prune = this.db.prepare('DELETE FROM form_delivery_attempts WHERE delivery_id = ? AND n <= ?');
      for (const r of rows) {
        mark.run(now, r.id);
        r.state = 'sending';
        r.attempts++;
        const { n } = attempt.get(r.id, r.id, now) as { n: number };
        if (n > ATTEMPTS_KEPT) prune.run(r.id, n - ATTEMPTS_KEPT);
      }
      return rows;
    })();
  }

  /** Settles the delivery's attempt in flight. */
  private settle(id: number, outcome: 'sent' | 'failed', r: AttemptResult): void {
    this.db.prepare(`UPDATE form_delivery_attempts SET outcome = ?, duration_ms = ?, status = ?, error = ?
      WHERE delivery_id = ? AND outcome = 'sending'`).run(outcome, Math.max(0, Math.round(r.durationMs)), r.status, r.error, id);
  }

  /** The earliest time a row becomes due, or undefined when none waits. */
  nextDue(): number | undefined {
    const r = this.db.prepare("SELECT MIN(next_at) AS t FROM form_deliveries WHERE state IN ('pending', 'retrying')").get() as { t: number | null };
    return r.t ?? undefined;
  }

  /** The attempt succeeded: the delivery is sent. */
  sent(id: number, status: number | null, now: number, durationMs: number): void {
    this.db.transaction(() => {
      this.db.prepare("UPDATE form_deliveries SET state = 'sent', last_status = ?, last_error = NULL, sent_at = ?, updated_at = ? WHERE id = ?").run(status, now, now, id);
      this.settle(id, 'sent', { status, error: null, durationMs });
    })();
  }

  /** The attempt failed and another is due at `at`. */
  retryAt(id: number, error: string, status: number | null, at: number, now: number, durationMs: number): void {
    this.db.transaction(() => {
      this.db.prepare("UPDATE form_deliveries SET state = 'retrying', last_error = ?, last_status = ?, next_at = ?, updated_at = ? WHERE id = ?").run(error, status, at, now, id);
      this.settle(id, 'failed', { status, error, durationMs });
    })();
  }

  /** The attempt failed and the delivery is given up (until a retry re-queues it). */
  failed(id: number, error: string, status: number | null, now: number, durationMs: number): void {
    this.db.transaction(() => {
      this.db.prepare("UPDATE form_deliveries SET state = 'failed', last_error = ?, last_status = ?, updated_at = ? WHERE id = ?").run(error, status, now, id);
      this.settle(id, 'failed', { status, error, durationMs });
    })();
  }

  /** The attempts of these deliveries, oldest first, by delivery id. */
  attemptsOf(ids: readonly number[]): Map<number, AttemptRow[]> {
    const out = new Map<number, AttemptRow[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return out;
    const rows = this.db.prepare(`SELECT * FROM form_delivery_attempts WHERE delivery_id IN (${ids.map(() => '?').join(', ')}) ORDER BY delivery_id, n`).all(...ids) as AttemptRow[];
    for (const r of rows) out.get(r.delivery_id)!.push(r);
    return out;
  }

  /**
   * Gives back a row taken by `take` that this node does not send now (another node holds it, or
   * settled it): its attempt is not counted nor recorded, and it is due again at `nextAt` in
   * `state` (`sent` and `failed`: not again).
   */
  untake(id: number, state: DeliveryState, nextAt: number, now: number): void {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM form_delivery_attempts WHERE delivery_id = ? AND outcome = 'sending'").run(id);
      this.db.prepare('UPDATE form_deliveries SET state = ?, attempts = MAX(0, attempts - 1), next_at = ?, updated_at = ? WHERE id = ?').run(state, nextAt, now, id);
    })();
  }

  /**
   * Records what another node's attempt of a delivery did (by its cluster key), unless this node
   * is sending it right now (its own outcome follows). Returns whether a row changed.
   */
  mirror(key: string, d: SettledDelivery, now: number): boolean {
    return this.db.prepare(`UPDATE form_deliveries SET state = ?, attempts = ?, last_status = ?, last_error = ?, next_at = ?, sent_at = ?, updated_at = ?
      WHERE cluster_key = ? AND state != 'sending'`).run(d.state, d.attempts, d.status, d.error, d.nextAt, d.sentAt, now, key).changes === 1;
  }

  /** Drops a row whose action or submission is gone. */
  drop(id: number): void {
    this.db.prepare('DELETE FROM form_deliveries WHERE id = ?').run(id);
  }

  /** The cluster keys of an action's failed deliveries. */
  failedKeys(actionId: string): string[] {
    return (this.db.prepare("SELECT cluster_key FROM form_deliveries WHERE action_id = ? AND state = 'failed' AND cluster_key IS NOT NULL").all(actionId) as { cluster_key: string }[]).map((r) => r.cluster_key);
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
