import type { Logger } from '../log/logger.js';
import { createLatestRecorder } from './config-latest.js';
import type { ConfigLedger } from './ledger.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';

/** Publishes the outbox (runtime/cluster/outbox.ts) to the config stream. */
export interface ConfigPublisher {
  /** Drains the outbox in order while the bus is up; one drain at a time (a second call joins it). */
  flush(): Promise<void>;
  stop(): void;
}

/**
 * Publishes each outbox row on `<subjectPrefix>.<cluster>` with its revision as message id (the
 * stream drops a re-publish inside its duplicate window), drops the row once acknowledged, and
 * moves `<cluster>.latest` in KV to the acknowledged sequence. A failed publish keeps the row and
 * the drain is tried again a second later. Never throws.
 */
export function startConfigPublisher(deps: {
  link: NatsLink; names: ClusterNames; ledger: ConfigLedger; metrics: ClusterMetrics; log: Logger; publishTimeoutMs: number;
}): ConfigPublisher {
  const { link, names, ledger, metrics, log } = deps;
  const enc = new TextEncoder();
  const latest = createLatestRecorder({ link, names, metrics });
  let stopped = false;
  let flushing: Promise<void> | undefined;
  const flush = (): Promise<void> => (flushing ??= drain().finally(() => { flushing = undefined; }));
  const drain = async () => {
    // re-read the outbox after each publish: plans enqueued while this loop runs go out in it too
    for (let item = ledger.pending()[0]; item; item = ledger.pending()[0]) {
      if (!link.up || !link.js || stopped) return;
      try {
        const ack = await link.js.publish(names.configSubject, enc.encode(item.body), { msgID: item.revision, timeout: deps.publishTimeoutMs });
        ledger.acknowledged(item.revision);
        metrics.published.inc({ type: 'config' });
        latest.want(item.revision, ack.seq);
      } catch (err) {
        log.warn({ err, revision: item.revision }, 'config publish failed; kept in the outbox');
        setTimeout(() => void flush(), 1_000).unref();
        return;
      }
    }
  };
  return { flush, stop: () => { stopped = true; latest.stop(); } };
}
