import type { HealthEntry } from '../health/port.js';

/** A peer's report for one endpoint, with the local time it arrived. */
export interface PeerEntry extends HealthEntry {
  receivedAt: number;
}

/**
 * The health entries other nodes report: pool id → IP → node → entry. Filled by flips received
 * over NATS and by the periodic catch-up from KV. An update older than the stored one (by
 * `lastChecked`) is ignored, so a late catch-up never undoes a newer flip.
 */
export class PeerHealth {
  private readonly byPool = new Map<string, Map<string, Map<string, PeerEntry>>>();

  /** Stores a peer's entry unless an entry with a newer `lastChecked` is there. Returns whether it changed. */
  set(poolId: string, ip: string, entry: PeerEntry): boolean {
    let pool = this.byPool.get(poolId);
    if (!pool) this.byPool.set(poolId, (pool = new Map()));
    let nodes = pool.get(ip);
    if (!nodes) pool.set(ip, (nodes = new Map()));
    const cur = nodes.get(entry.node);
    if (cur && cur.lastChecked > entry.lastChecked) return false;
    if (cur && cur.lastChecked === entry.lastChecked && cur.healthy === entry.healthy) return false;
    nodes.set(entry.node, entry);
    return true;
  }
  /** Removes one node's entry for an endpoint. */
  delete(poolId: string, ip: string, node: string): void {
    this.byPool.get(poolId)?.get(ip)?.delete(node);
  }
  /** Reports for one endpoint (node → entry). Hot path: two map lookups. */
  reports(poolId: string, ip: string): ReadonlyMap<string, PeerEntry> | undefined {
    return this.byPool.get(poolId)?.get(ip);
  }
  /** Every entry of one node, as `[poolId, ip, entry]`. */
  ofNode(node: string): [string, string, PeerEntry][] {
    const out: [string, string, PeerEntry][] = [];
    for (const [poolId, ips] of this.byPool) for (const [ip, nodes] of ips) {
      const e = nodes.get(node);
      if (e) out.push([poolId, ip, e]);
    }
    return out;
  }
  /** Every entry, as `[poolId, ip, entry]`. */
  all(): [string, string, PeerEntry][] {
    const out: [string, string, PeerEntry][] = [];
    for (const [poolId, ips] of this.byPool) for (const [ip, nodes] of ips) for (const e of nodes.values()) out.push([poolId, ip, e]);
    return out;
  }
}
