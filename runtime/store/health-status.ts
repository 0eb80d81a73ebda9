import type { Db } from './db.js';
import type { HealthEntry } from '../health/view.js';

/** Persisted health status, written only when an endpoint flips (gslb-api.md §3 rule 1). */
export class HealthStatusStore {
  private readonly upsert;
  private readonly delPool;
  private readonly delOne;
  constructor(private readonly db: Db) {
    this.upsert = db.prepare(`INSERT INTO health_status (pool_id, ip_address, healthy, score, last_checked, rtt_ms, node)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(pool_id, ip_address) DO UPDATE SET healthy=excluded.healthy,
      score=excluded.score, last_checked=excluded.last_checked, rtt_ms=excluded.rtt_ms, node=excluded.node`);
    this.delPool = db.prepare('DELETE FROM health_status WHERE pool_id = ?');
    this.delOne = db.prepare('DELETE FROM health_status WHERE pool_id = ? AND ip_address = ?');
  }
  /** Every stored entry. */
  loadAll(): { poolId: string; ipAddress: string; entry: HealthEntry }[] {
    const rows = this.db.prepare('SELECT * FROM health_status').all() as {
      pool_id: string; ip_address: string; healthy: number; score: number; last_checked: number; rtt_ms: number; node: string;
    }[];
    return rows.map((r) => ({
      poolId: r.pool_id, ipAddress: r.ip_address,
      entry: { healthy: r.healthy === 1, score: r.score, lastChecked: r.last_checked, rttMs: r.rtt_ms, node: r.node },
    }));
  }
  write(poolId: string, ipAddress: string, e: HealthEntry): void {
    this.upsert.run(poolId, ipAddress, e.healthy ? 1 : 0, e.score, e.lastChecked, Math.round(e.rttMs), e.node);
  }
  remove(poolId: string, ipAddress?: string): void {
    if (ipAddress === undefined) this.delPool.run(poolId);
    else this.delOne.run(poolId, ipAddress);
  }
}
