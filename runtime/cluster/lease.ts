import type { KV } from '@nats-io/kv';
import type { Logger } from '../log/logger.js';
import { bounded } from './bounded.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';

/** What the GitOps loop consults before pulling: `core.ports.gitLeader`. */
export interface GitLeader {
  /** true while this node holds the lease (always true on a single node or without config sync) */
  holds(): boolean;
  /** the node id holding the lease as last seen, or undefined */
  leader(): string | undefined;
  /**
   * For a holder whose renewal is late (in flight, or its timer held back by a busy thread):
   * waits for that renewal, at most the lease time, so holds() tells what the server decided
   * rather than what the clock guessed. Returns at once otherwise.
   */
  settle?(): Promise<void>;
}

/**
 * Whether this node holds the lease, asked before an action only the holder may take: a holder
 * whose renewal is late waits for it first (GitLeader.settle). No lease port: true.
 */
export async function holdsNow(leader: GitLeader | undefined): Promise<boolean> {
  if (!leader || leader.holds()) return true;
  await leader.settle?.();
  return leader.holds();
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
 *
 * One attempt at a time: a renewal slower than the timer's period is not joined by a second one at
 * the same revision (which would fail once the first succeeded, and the holder would then wait out
 * its own key). A renewal whose answer was lost while the server applied it leaves the key holding
 * this node's id at a newer revision: the holder takes that revision and renews from it.
 */
export function startGitLease(deps: {
  link: NatsLink; names: ClusterNames; ttlMs: number; log: Logger; metrics: ClusterMetrics; now?: () => number;
  /** another lease than the git leader's: its key (`<cluster>.<key>`) in its own bucket (the bucket's TTL is the lease time) */
  other?: { key: string; bucket: string };
}): GitLeader & { stop: () => Promise<void> } {
  const { link, names, ttlMs } = deps;
  const now = deps.now ?? Date.now;
  const key = `${names.clusterToken}.${deps.other?.key ?? 'gitLeader'}`;
  const bucket = deps.other?.bucket ?? names.leaseBucket;
  const what = deps.other ? `${deps.other.key} lease` : 'git leader lease';
  const marginMs = Math.min(2_000, ttlMs / 5);
  const enc = new TextEncoder();
  let kv: KV | undefined;
  let revision = 0;
  let validUntil = 0;
  let leader: string | undefined;
  let stopped = false;
  const op = (name: string, ok: boolean) => deps.metrics.kvOps.inc({ bucket, op: name, result: ok ? 'ok' : 'error' });

  const attempt = async () => {
    if (stopped || !link.up) return;
    kv ??= await link.bucket(bucket, { ttl: ttlMs });
    const sentAt = now();
    const renewing = revision > 0;
    try {
      revision = renewing ? await kv.update(key, enc.encode(names.node), revision) : await kv.create(key, enc.encode(names.node));
      op(renewing ? 'update' : 'create', true);
      if (leader !== names.node) deps.log.info({ node: names.node }, `${what} taken`);
      validUntil = sentAt + ttlMs - marginMs;
      leader = names.node;
    } catch {
      const e = await kv.get(key).catch(() => null);
      leader = e && e.operation === 'PUT' ? e.string() : undefined;
      if (renewing && leader === names.node && e) {
        // the server applied a renewal whose answer did not arrive: renew from its revision
        revision = e.revision;
        return;
      }
      if (renewing) deps.log.warn({ leader }, `${what} lost`);
      revision = 0; validUntil = 0;
    }
  };
  let inflight: Promise<void> | undefined;
  const tick = (): Promise<void> => {
    inflight ??= attempt().catch(() => undefined).finally(() => { inflight = undefined; });
    return inflight;
  };
  const holds = () => revision > 0 && now() < validUntil;
  const timer = setInterval(() => void tick(), Math.max(100, Math.floor(ttlMs / 3)));
  timer.unref();
  link.onReady(() => tick());
  return {
    holds,
    leader: () => (holds() ? names.node : leader),
    settle: async () => {
      if (revision === 0 || holds()) return;
      await bounded(tick(), ttlMs, () => undefined);
    },
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      if (kv && revision > 0 && link.up) await kv.delete(key, { previousSeq: revision }).catch(() => undefined);
      revision = 0;
    },
  };
}
