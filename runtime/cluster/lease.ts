import type { KV } from '@nats-io/kv';
import type { Logger } from '../log/logger.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';

/** What the GitOps loop consults before pulling: `core.ports.gitLeader`. */
export interface GitLeader {
  /** true while this node holds the lease (always true on a single node or without config sync) */
  holds(): boolean;
  /** the node id holding the lease as last seen, or undefined */
  leader(): string | undefined;
}

/** A leader that always holds: single node, or config sync off (each node pulls for itself). */
export const ALWAYS_LEADER: GitLeader = { holds: () => true, leader: () => undefined };

/**
 * The `gitLeader` lease: a key in KV bucket `<kvBucket>_LEASE` whose bucket TTL is the lease time
 * (heartbeatTTL). Taken with `create` (fails while another node holds it), renewed every third of
 * the TTL with `update` at the expected revision (fails if someone else took it), and released at
 * shutdown with a delete at the expected revision. `holds()` turns false `marginMs` before the
 * lease could expire on the server, so two nodes never both believe they hold it. No consensus of
 * our own: JetStream's per-key revision decides.
 */
export function startGitLease(deps: { link: NatsLink; names: ClusterNames; ttlMs: number; log: Logger; metrics: ClusterMetrics; now?: () => number }): GitLeader & { stop: () => Promise<void> } {
  const { link, names, ttlMs } = deps;
  const now = deps.now ?? Date.now;
  const key = `${names.clusterToken}.gitLeader`;
  const marginMs = Math.min(2_000, ttlMs / 5);
  const enc = new TextEncoder();
  let kv: KV | undefined;
  let revision = 0;
  let validUntil = 0;
  let leader: string | undefined;
  let stopped = false;
  const op = (name: string, ok: boolean) => deps.metrics.kvOps.inc({ bucket: names.leaseBucket, op: name, result: ok ? 'ok' : 'error' });

  const tick = async () => {
    if (stopped || !link.up) return;
    kv ??= await link.bucket(names.leaseBucket, { ttl: ttlMs });
    const sentAt = now();
    const renewing = revision > 0;
    try {
      revision = renewing ? await kv.update(key, enc.encode(names.node), revision) : await kv.create(key, enc.encode(names.node));
      op(renewing ? 'update' : 'create', true);
      if (leader !== names.node) deps.log.info({ node: names.node }, 'git leader lease taken');
      validUntil = sentAt + ttlMs - marginMs;
      leader = names.node;
    } catch {
      if (revision > 0) deps.log.warn('git leader lease lost');
      revision = 0; validUntil = 0;
      const e = await kv.get(key).catch(() => null);
      leader = e && e.operation === 'PUT' ? e.string() : undefined;
    }
  };
  const timer = setInterval(() => void tick().catch(() => undefined), Math.max(100, Math.floor(ttlMs / 3)));
  timer.unref();
  link.onReady(() => tick());
  return {
    holds: () => revision > 0 && now() < validUntil,
    leader: () => (revision > 0 && now() < validUntil ? names.node : leader),
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      if (kv && revision > 0 && link.up) await kv.delete(key, { previousSeq: revision }).catch(() => undefined);
      revision = 0;
    },
  };
}
