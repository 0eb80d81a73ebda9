import type { Core } from '../app.js';
import { startConfigConsumer } from './config-consumer.js';
import { startConfigPublisher } from './config-publisher.js';
import type { ConfigLedger } from './ledger.js';
import type { ConfigGate } from './config-gate.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';
import { outboxHook } from './outbox.js';

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
 * After each (re)connection the stream is created when absent, the consumer restarts and the
 * outbox is flushed.
 */
export function startConfigSync(deps: {
  core: Core; link: NatsLink; names: ClusterNames; ledger: ConfigLedger; gate: ConfigGate; metrics: ClusterMetrics; applyTimeoutMs: number;
}): {
  flush: () => Promise<void>;
  status: () => { lastSeq: number; lastRevision: string; outbox: number; stalled: string | undefined; holding: { revision: string; seq: number; messages: number } | undefined };
  stop: () => void;
} {
  const { core, link, names, ledger, metrics, applyTimeoutMs } = deps;
  const log = core.log.child({ component: 'config-sync' });
  const consumer = startConfigConsumer({ link, names, ledger, gate: deps.gate, metrics, log, applyTimeoutMs });
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
    stop: () => { offOutbox(); consumer.stop(); publisher.stop(); },
  };
}
