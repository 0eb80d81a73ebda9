import type { Db } from '../store/db.js';
import type { HealthEntry } from './health-view.js';

/**
 * Persisted health status, written only when an endpoint flips (gslb-api.md §3 rule 1). Writes of
 * one turn of the event loop are committed together, in one transaction at the end of the turn
 * (setImmediate): thousands of members checked for the first time after a large import would
 * otherwise cost one commit each on the thread that answers DNS (docs/health.md "Effects"). Reads
 * and removals commit what is queued first, so the table never goes back in time.
 */
export class HealthStatusStore {
  private readonly upsert;
  private readonly delPool;
  private readonly delOne;
  /** the values as written (a caller's entry object may change after `write`: it is not kept) */
  private pending = new Map<string, [string, string, HealthEntry]>();
  private scheduled = false;

  /** `onError`: told when a queued batch cannot be written (it is dropped; the next flip writes again). */
  constructor(private readonly db: Db, private readonly onError: (err: unknown) => void = () => {}) {
    this.upsert = db.prepare(`INSERT INTO health_status (pool_id, ip_address, healthy, score, last_checked, rtt_ms, node)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(pool_id, ip_address) DO UPDATE SET healthy=excluded.healthy,
      score=excluded.score, last_checked=excluded.last_checked, rtt_ms=excluded.rtt_ms, node=excluded.node`);
    this.delPool = db.prepare('DELETE FROM health_status WHERE pool_id = ?');
    this.delOne = db.prepare('DELETE FROM health_status WHERE pool_id = ? AND ip_address = ?');
  }

  /** Every stored entry. */
  loadAll(): { poolId: string; ipAddress: string; entry: HealthEntry }[] {
    this.flush();
    const rows = this.db.prepare('SELECT * FROM health_status').all() as {
      pool_id: string; ip_address: string; healthy: number; score: number; last_checked: number; rtt_ms: number; node: string;
    }[];
    return rows.map((r) => ({
      poolId: r.pool_id, ipAddress: r.ip_address,
      entry: { healthy: r.healthy === 1, score: r.score, lastChecked: r.last_checked, rttMs: r.rtt_ms, node: r.node },
    }));
  }

  /** Queues a copy of an entry; it is committed at the end of this turn of the event loop (with the turn's others). */
  write(poolId: string, ipAddress: string, e: HealthEntry): void {
    this.pending.set(`${poolId}\u0000${ipAddress}`, [poolId, ipAddress, { healthy: e.healthy, score: e.score, lastChecked: e.lastChecked, rttMs: e.rttMs, node: e.node }]);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => { this.flush(); });
  }

  /** Removes a pool's entries, or one endpoint's (after committing what is queued). */
  remove(poolId: string, ipAddress?: string): void {
    this.flush();
    if (ipAddress === undefined) this.delPool.run(poolId);
    else this.delOne.run(poolId, ipAddress);
  }

  /** Commits the queued entries now (also at shutdown, before the database closes). */
  flush(): void {
    this.scheduled = false;
    if (this.pending.size === 0 || !this.db.open) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      this.db.transaction(() => {
        for (const [poolId, ip, e] of batch.values()) this.upsert.run(poolId, ip, e.healthy ? 1 : 0, e.score, e.lastChecked, Math.round(e.rttMs), e.node);
      })();
    } catch (err) {
      this.onError(err);
    }
  }
}
