import type { Logger } from '../log/logger.js';
import type { Liveness } from './liveness.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';
import { subscribePeers } from './peer-subscription.js';

/** A heartbeat message on `svc.hb.<cluster>`. */
export interface HeartbeatMsg {
  node: string;
  at: number;
  configSeq: number;
  configRevision: string;
  /** sent once at (re)connection: peers answer with their own heartbeat at once */
  hello?: boolean;
  /** sent at graceful shutdown: peers drop the node at once */
  bye?: boolean;
  /**
   * while this node bakes a canary revision it applied: its signals (docs/gitops.md "Canary apply";
   * the shape is gitops/canary/msg.ts `CanaryReport`, checked by the receiver)
   */
  canary?: unknown;
}

/**
 * Publishes this node's heartbeat every `intervalMs` and feeds peers' heartbeats into `Liveness`.
 * A `hello` at each connection makes peers answer at once, so a joining node learns the live set
 * without waiting a full interval. `canary` adds this node's canary report to each heartbeat;
 * `onCanary` receives every peer's (undefined when its heartbeat carries none). Returns a stop
 * function that says goodbye.
 */
export function startHeartbeats(deps: {
  link: NatsLink; names: ClusterNames; live: Liveness; metrics: ClusterMetrics; log: Logger;
  intervalMs: number; config: () => { seq: number; revision: string };
  canary?: () => unknown; onCanary?: (node: string, report: unknown) => void;
}): () => void {
  const { link, names, live, metrics } = deps;
  const enc = new TextEncoder();
  const publish = (extra: Partial<HeartbeatMsg> = {}) => {
    if (!link.up || !link.nc) return;
    const c = deps.config();
    const canary = extra.bye ? undefined : deps.canary?.();
    const msg: HeartbeatMsg = { node: names.node, at: Date.now(), configSeq: c.seq, configRevision: c.revision, ...(canary ? { canary } : {}), ...extra };
    try {
      link.nc.publish(names.heartbeatSubject, enc.encode(JSON.stringify(msg)));
      metrics.published.inc({ type: 'heartbeat' });
    } catch (err) { deps.log.debug({ err }, 'heartbeat publish failed'); }
  };
  subscribePeers<HeartbeatMsg>(link, names.heartbeatSubject, names.node, (hb) => {
    metrics.received.inc({ type: 'heartbeat' });
    if (hb.bye) { live.left(hb.node); return; }
    live.heard(hb.node, hb.configSeq, hb.configRevision);
    deps.onCanary?.(hb.node, hb.canary);
    metrics.configSeq.set({ peer: hb.node }, hb.configSeq);
    if (hb.hello) publish();
  });
  link.onReady(() => {
    publish({ hello: true });
  });
  const timer = setInterval(() => publish(), deps.intervalMs);
  const sweeper = setInterval(() => live.sweep(), Math.min(1_000, deps.intervalMs));
  timer.unref(); sweeper.unref();
  return () => {
    clearInterval(timer); clearInterval(sweeper);
    publish({ bye: true });
  };
}
