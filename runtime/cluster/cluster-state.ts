import type { GitLeader } from './lease.js';
import type { Liveness } from './liveness.js';
import type { PeerHealth } from './peer-health.js';

/** What the cluster part exposes to its routes and to tests (`core.ports.cluster`). */
export interface ClusterState {
  enabled: boolean;
  node: string;
  cluster: string;
  policy: string;
  connected: () => boolean;
  live: Liveness;
  peers: PeerHealth;
  gitLeader: GitLeader;
  config: () => { enabled: boolean; lastSeq: number; lastRevision: string; outbox: number; stalled: string | undefined };
  /** runs the health catch-up now (tests; reconnect) */
  catchUp: () => Promise<void>;
}
