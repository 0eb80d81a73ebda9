import type { Db } from '../store/db.js';
import type { AlertEvent } from './events.js';

/** One queued alert event as stored. */
export interface QueuedAlert {
  id: number;
  event: AlertEvent;
  /** the event's id in the cluster (sent by one node), or null for this node's own events */
  clusterId: string | null;
  claimed: boolean;
}

/**
 * The persisted alert queue (SQLite `alert_queue`, migration 0018; docs/alerts.md "The queue"):
 * an event is written before it is handed to the dispatcher and deleted once every target it was
 * queued for delivered it or gave up; what is left at a restart is queued again.
 */
export class AlertQueue {
  constructor(private readonly db: Db) {}

  add(event: AlertEvent, clusterId: string | null, now = Date.now()): number {
    const r = this.db.prepare('INSERT INTO alert_queue (event, cluster_id, queued_at) VALUES (?, ?, ?)').run(JSON.stringify(event), clusterId, now);
    return Number(r.lastInsertRowid);
  }

  markClaimed(id: number): void {
    this.db.prepare('UPDATE alert_queue SET claimed = 1 WHERE id = ?').run(id);
  }

  remove(id: number): void {
    this.db.prepare('DELETE FROM alert_queue WHERE id = ?').run(id);
  }

  /** Every queued event, oldest first; rows that do not parse are dropped. */
  all(): QueuedAlert[] {
    const rows = this.db.prepare('SELECT id, event, cluster_id, claimed FROM alert_queue ORDER BY id').all() as { id: number; event: string; cluster_id: string | null; claimed: number }[];
    const out: QueuedAlert[] = [];
    for (const r of rows) {
      try {
        out.push({ id: r.id, event: JSON.parse(r.event) as AlertEvent, clusterId: r.cluster_id, claimed: r.claimed === 1 });
      } catch {
        this.remove(r.id);
      }
    }
    return out;
  }
}
