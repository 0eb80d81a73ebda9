import type { Core } from '../app.js';
import { startConfigConsumer } from './config-consumer.js';
import { startConfigPublisher } from './config-publisher.js';
import type { ConfigLedger } from './ledger.js';
import type { ConfigGate } from './config-gate.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';
import { outboxHook } from './outbox.js';
import type { GitLeader } from './lease.js';
import { parseDuration } from '../config/duration.js';
import type { SnapshotPolicy } from './config-snapshot.js';
import { createSnapshotMetrics } from './snapshot-metrics.js';
import { loadSnapshotIfBehind } from './snapshot-load.js';
import { readSnapshotRecord } from './snapshot-record.js';
import { startSnapshotWriter } from './snapshot-writer.js';

export type { ConfigMsg } from './config-msg.js';

/**
 * Config sync over the JetStream stream `state.config.stream` (docs/cluster.md "Config sync"),
 * composed of three pieces:
 * - the outbox apply hook (outbox.ts): every plan applied here that did not come from the stream
 *   is queued in the apply's own SQLite transaction, and a flush follows its swap;
 * - the publisher (config-publisher.ts): drains the outbox onto `<subjectPrefix>.<cluster>` with
 *   the revision as message id and moves `<cluster>.latest` in KV `state.config.kvBucket`;
 * - the consumer (config-consumer.ts): applies the stream in order from the last applied
 *   sequence + 1, each plan rebased on the local rows and committed with its ledger row, so a node
 *   killed at any point resumes exactly where it stopped; a plan that cannot be applied within
 *   `applyTimeout` is retried from the same sequence (never skipped). Every message passes its
 *   gate (config-gate.ts): with gitops, the canary gate, which applies canary plans at once on
 *   canary nodes and holds them on the others until their decision.
 * - compaction (docs/cluster.md "Compaction"): the lease holder writes a snapshot of the rows
 *   now and then (snapshot-writer.ts) and purges the stream below it; a node that joins empty or
 *   fell behind the purge point loads it before reading the stream (snapshot-load.ts).
 * After each (re)connection the stream is created when absent, the consumer restarts and the
 * outbox is flushed.
 */
export function startConfigSync(deps: {
  core: Core; link: NatsLink; names: ClusterNames; ledger: ConfigLedger; gate: ConfigGate; metrics: ClusterMetrics; applyTimeoutMs: number;
  /** the git leader lease: its holder writes the snapshots */
  lease: GitLeader;
}): {
  flush: () => Promise<void>;
  status: () => { lastSeq: number; lastRevision: string; outbox: number; stalled: string | undefined; holding: { revision: string; seq: number; messages: number } | undefined };
  stop: () => void;
} {
  const { core, link, names, ledger, metrics, applyTimeoutMs } = deps;
  const log = core.log.child({ component: 'config-sync' });
  const snapMetrics = createSnapshotMetrics(core.metrics);
  const snapshots = {
    catchUp: async () => (await loadSnapshotIfBehind({ core, link, names, ledger, log, metrics: snapMetrics, timeoutMs: applyTimeoutMs })) !== undefined,
    purgedFrom: async (seq: number) => seq < ((await readSnapshotRecord(link, names))?.purgedBelow ?? 0),
  };
  const consumer = startConfigConsumer({ link, names, ledger, gate: deps.gate, metrics, log, applyTimeoutMs, snapshots });
  const c = core.config.state.config;
  const policy: SnapshotPolicy = { every: c.snapshotEvery, intervalMs: parseDuration(c.snapshotInterval) ?? 0, keep: c.snapshotKeep };
  const dbPath = core.config.database.path;
  const writer = dbPath === ':memory:' ? undefined
    : startSnapshotWriter({ dbPath, link, names, ledger, lease: deps.lease, policy, metrics: snapMetrics, log, timeoutMs: applyTimeoutMs });
  const publisher = startConfigPublisher({ link, names, ledger, metrics, log, publishTimeoutMs: applyTimeoutMs });
  const offOutbox = core.applyHooks.add(outboxHook(ledger, names.node, () => void publisher.flush()));

  link.onReady(async () => {
    const jsm = link.jsm;
    if (!jsm) throw new Error('nats not connected'); // the link retries this step on the next connection
    const cfg = { name: names.configStream, subjects: [`${core.config.state.config.subjectPrefix}.>`], num_replicas: link.replicas(), duplicate_window: 120_000_000_000 };
    try { await jsm.streams.info(names.configStream); } catch { await jsm.streams.add(cfg); }
    consumer.restart();
    void publisher.flush();
  });

  return {
    flush: publisher.flush,
    status: () => {
      const c = consumer.status();
      return { lastSeq: c.lastSeq, lastRevision: c.lastRevision, outbox: ledger.pendingCount(), stalled: c.stalled, holding: c.holding };
    },
    stop: () => { offOutbox(); writer?.stop(); consumer.stop(); publisher.stop(); },
  };
}
