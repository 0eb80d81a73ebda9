import { PARTS } from '../parts.js';
import type { Core } from '../app.js';
import type { ApiExtensions } from '../api/server.js';
import { parseDuration } from '../config/duration.js';
import { createClusterMetrics } from './metrics.js';
import { clusterNames } from './names.js';
import { Liveness } from './liveness.js';
import { PeerHealth } from './peer-health.js';
import { makeHealthPolicy, makeRttPolicy } from './install-policy.js';
import { ALWAYS_LEADER, startGitLease, type GitLeader } from './lease.js';
import { NatsLink } from './nats-link.js';
import { connectOptions } from './connect-options.js';
import { startHeartbeats } from './heartbeat.js';
import { startHealthSync } from './health-sync.js';
import { startConfigSync } from './config-sync.js';
import { ConfigLedger } from './ledger.js';
import { KvNonceStore, KvSessionStore } from './kv-stores.js';
import { kvClaim, kvClaimOwned, type ClusterClaim, type ClusterClaimOwned } from './kv-claim.js';
import { sharedLimits } from './shared-limits.js';
import { kvUniqueNames, releaseHook } from './unique-names.js';
import { clusterStreams } from './streams.js';
import { clusterRoutes } from './routes.js';
import { subscribePeers } from './peer-subscription.js';
import type { ClusterState } from './cluster-state.js';
import { plainGate } from './plain-gate.js';
import type { ConfigSyncHooks } from './port.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the cluster's links, stores and status (GET /cluster/status reads it) */
    cluster?: ClusterState;
    /** whether this node may pull from git: the lease holder in a cluster with config sync, else always */
    gitLeader?: GitLeader;
    /** cluster-wide first-claim-wins in KV (replay caches; kv-claim.ts); unset without `state.nats.servers` */
    clusterClaim?: ClusterClaim;
    /** as clusterClaim, a key this node made earlier counts as its own (alerts of the cluster); set with config sync only */
    clusterClaimOwned?: ClusterClaimOwned;
  }
}

/** Default catch-up period (gslb-api.md §3 rule 3); `GSLB_STATE_CATCHUP` (a duration) overrides it for tests. */
const CATCH_UP_MS = 30_000;

/**
 * The cluster part (DESIGN decision 8, docs/cluster.md). Always installs the health policy and the
 * `/cluster` routes. With `state.nats.servers` set it also: replaces `core.sessions`/`core.nonces`
 * with KV stores, syncs health flips and heartbeats, runs config sync when
 * `state.enableConfigSync`, extended by `core.ports.configSyncExtension` (the canary of gitops:
 * its gate in the consumer, its reports in heartbeats; runtime/cluster/port.ts), and holds the
 * git leader lease (`core.ports.gitLeader`). Without servers
 * the node is self-contained and `gitLeader.holds()` is always true.
 */
function setupCluster(core: Core, ext: ApiExtensions): void {
  const cfg = core.config.state;
  const names = clusterNames(core.config);
  const ttlMs = parseDuration(cfg.heartbeatTTL) ?? 30_000;
  const intervalMs = parseDuration(cfg.heartbeatInterval) ?? 10_000;
  const live = new Liveness(names.node, ttlMs);
  const peers = new PeerHealth();
  core.health.policy = makeHealthPolicy(cfg.healthPolicy, peers, live, cfg.quorumMinPercent);
  core.health.rtt = makeRttPolicy(peers, live);
  const enabled = cfg.nats.servers.length > 0;
  const metrics = createClusterMetrics(core.metrics);
  metrics.liveNodes.set(1);
  live.onChange = (set) => { metrics.liveNodes.set(set.size + 1); core.health.version++; };
  const state: ClusterState = {
    enabled, node: names.node, cluster: names.cluster, policy: cfg.healthPolicy,
    connected: () => false, live, peers, gitLeader: ALWAYS_LEADER,
    config: () => ({ enabled: false, lastSeq: 0, lastRevision: '', outbox: 0, stalled: undefined }),
    canary: () => null,
    catchUp: async () => {},
    channel: () => () => undefined,
  };
  core.ports.cluster = state;
  core.ports.gitLeader = ALWAYS_LEADER;
  ext.apiPlugins.push(clusterRoutes(core, state));
  if (!enabled) return;

  const log = core.log.child({ component: 'cluster' });
  const link = new NatsLink(connectOptions(core.config), cfg.nats.jetStream.domain, log, metrics);
  state.connected = () => link.up;
  state.channel = <T extends { node: string }>(topic: string, onPeer: (msg: T) => void) => {
    const subject = `svc.${topic}.${names.clusterToken}`;
    subscribePeers<T>(link, subject, names.node, (m) => { metrics.received.inc({ type: topic }); onPeer(m); });
    const enc = new TextEncoder();
    return (msg: Omit<T, 'node'>) => {
      if (!link.up || !link.nc) return;
      try {
        link.nc.publish(subject, enc.encode(JSON.stringify({ ...msg, node: names.node })));
        metrics.published.inc({ type: topic });
      } catch { /* best effort: a lost batch is a few samples */ }
    };
  };
  const sessionTtl = parseDuration(core.config.auth.sessionTTL) ?? 86_400_000;
  const sessions = new KvSessionStore(link, () => link.bucket(names.sessionsBucket, { ttl: sessionTtl }), metrics, names.sessionsBucket);
  core.sessions = sessions;
  core.nonces = new KvNonceStore(link, () => link.bucket(names.noncesBucket, { ttl: 3_600_000 }), metrics, names.noncesBucket);
  link.onReady(() => sessions.flush());
  core.ports.clusterClaim = kvClaim(link, names, metrics);
  core.ports.clusterStreams = clusterStreams({ link, names, metrics, log });
  core.ports.sharedLimits = sharedLimits({ link, names, metrics, nodes: () => live.liveSet().size + 1 });

  const ledger = new ConfigLedger(core.db);
  const applyTimeoutMs = parseDuration(cfg.config.applyTimeout) ?? 5_000;
  let config: ReturnType<typeof startConfigSync> | undefined;
  let lease: ReturnType<typeof startGitLease> | undefined;
  let canary: ConfigSyncHooks | undefined;
  if (cfg.enableConfigSync) {
    // the link runs its ready steps all at once, so the lease starting before config sync changes nothing
    lease = startGitLease({ link, names, ttlMs, log, metrics });
    const flush = () => void config?.flush();
    canary = core.ports.configSyncExtension?.(core, { link, names, ledger, live, lease, metrics, log, heartbeatMs: intervalMs, applyTimeoutMs, flush });
    // unique names matter where rows are shared (docs/cluster.md "Unique names")
    const unique = kvUniqueNames(link, names, metrics);
    core.ports.uniqueNames = unique;
    // events of the shared config (rollbacks, rejections, applied revisions) alert once per cluster (docs/alerts.md)
    core.ports.clusterClaimOwned = kvClaimOwned(link, names, metrics);
    core.closers.push(core.applyHooks.add(releaseHook(unique)));
    const sync = startConfigSync({ core, link, names, ledger, gate: canary?.gate ?? plainGate({ core, ledger, timeoutMs: applyTimeoutMs }), metrics, applyTimeoutMs, lease });
    config = sync;
    state.config = () => ({ enabled: true, ...sync.status() });
    state.gitLeader = lease; core.ports.gitLeader = lease;
    if (canary) state.canary = canary.status;
  }
  const health = startHealthSync({ core, link, names, peers, metrics, catchUpMs: parseDuration(process.env.GSLB_STATE_CATCHUP) ?? CATCH_UP_MS });
  state.catchUp = health.catchUp;
  const stopHeartbeats = startHeartbeats({
    link, names, live, metrics, log, intervalMs, config: () => { const s = config?.status(); return { seq: s?.lastSeq ?? 0, revision: s?.lastRevision ?? '' }; },
    canary: () => canary?.heartbeat(), onCanary: (node, report) => canary?.heard(node, report),
  });

  // runs after the API and later parts have stopped, before the database closes
  core.closers.push(async () => {
    stopHeartbeats();
    canary?.stop();
    await lease?.stop();
    config?.stop();
    health.stop();
    await link.close();
  });
  link.start();
}

PARTS.push({ name: 'cluster', setup: setupCluster });
