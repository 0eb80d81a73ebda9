/** One peer as last heard from its heartbeat. */
export interface PeerInfo {
  node: string;
  /** local clock (ms) when the last heartbeat arrived */
  lastSeen: number;
  /** last config stream sequence and revision the peer applied (0 and '' without config sync) */
  configSeq: number;
  configRevision: string;
}

/**
 * Which peers are live: a peer is live while its last heartbeat is younger than heartbeatTTL
 * (gslb-config-auth.md §2). The live set is recomputed by `sweep` (called on every heartbeat and by
 * a timer), so the DNS hot path only does a Set lookup. The clock is injected for tests.
 */
export class Liveness {
  private readonly peers = new Map<string, PeerInfo>();
  private live = new Set<string>();
  /** called when the live set changes */
  onChange: (live: ReadonlySet<string>) => void = () => {};

  constructor(private readonly self: string, private readonly ttlMs: number, private readonly now: () => number = Date.now) {}

  /** Records a heartbeat from `node` (ignored for this node itself). */
  heard(node: string, configSeq = 0, configRevision = ''): void {
    if (node === this.self) return;
    this.peers.set(node, { node, lastSeen: this.now(), configSeq, configRevision });
    this.sweep();
  }
  /** Forgets a peer at once (it said goodbye). */
  left(node: string): void {
    this.peers.delete(node);
    this.sweep();
  }
  /** Recomputes the live set; returns it. */
  sweep(): ReadonlySet<string> {
    const now = this.now();
    const next = new Set<string>();
    for (const p of this.peers.values()) if (now - p.lastSeen < this.ttlMs) next.add(p.node);
    const changed = next.size !== this.live.size || [...next].some((n) => !this.live.has(n));
    this.live = next;
    if (changed) this.onChange(next);
    return next;
  }
  /** Whether a peer is live (as of the last sweep). Hot path. */
  isLive(node: string): boolean {
    return this.live.has(node);
  }
  /** Live peers (not counting this node). */
  liveSet(): ReadonlySet<string> {
    return this.live;
  }
  /** Every peer heard from, live or not. */
  all(): PeerInfo[] {
    return [...this.peers.values()];
  }
}
