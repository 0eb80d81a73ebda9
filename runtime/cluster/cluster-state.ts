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
  config: () => {
    enabled: boolean; lastSeq: number; lastRevision: string; outbox: number; stalled: string | undefined;
    /** the canary plan this node holds, and how many messages wait behind it (it included) */
    holding?: { revision: string; seq: number; messages: number } | undefined;
  };
  /**
   * the latest canary revision (docs/gitops.md "Canary apply"; schema `CanaryStatus`, made by
   * gitops/canary/watch.ts); null without one or without config sync
   */
  canary: () => object | null;
  /** runs the health catch-up now (tests; reconnect) */
  catchUp: () => Promise<void>;
  /**
   * A topic shared with the other nodes (`svc.<topic>.<cluster>`): peers' messages go to `onPeer`;
   * the returned function publishes one, stamped with this node's id. Without a cluster it
   * publishes nothing and nothing arrives. Messages are best effort (no stream, no replay).
   */
  channel: <T extends { node: string }>(topic: string, onPeer: (msg: T) => void) => (msg: Omit<T, 'node'>) => void;
}
