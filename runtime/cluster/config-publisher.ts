import type { Logger } from '../log/logger.js';
import { createLatestRecorder } from './config-latest.js';
import type { ConfigLedger } from './ledger.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';
import { carriedByRef, inlineLimit, MAX_PLAN_OBJECT_BYTES, messageBytes, planObjectName, type RefMsg } from './plan-ref.js';
import { putPlanObject } from './plan-store.js';

/** Publishes the outbox (gitops/canary/outbox.ts) to the config stream. */
export interface ConfigPublisher {
  /** Drains the outbox in order while the bus is up; one drain at a time (a second call joins it). */
  flush(): Promise<void>;
  stop(): void;
}

/**
 * Publishes each outbox row on `<subjectPrefix>.<cluster>` with its revision as message id (the
 * stream drops a re-publish inside its duplicate window), drops the row once acknowledged, and
 * moves `<cluster>.latest` in KV to the acknowledged sequence. A row larger than the server's
 * `max_payload` allows (`inlineLimit`) is first put in the object store `names.plansBucket`, and
 * a small reference message (plan-ref.ts) is published in its place once the put completed
 * (docs/cluster.md "Large plans"); a row larger than `MAX_PLAN_OBJECT_BYTES` is refused and kept.
 * A failed publish keeps the row and the drain is tried again a second later. Never throws.
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
  /** Puts a plan's bytes in the object store and returns the reference message to publish. */
  const putByRef = async (revision: string, body: Uint8Array, sha256: string, chunkBytes: number): Promise<Uint8Array> => {
    if (body.byteLength > MAX_PLAN_OBJECT_BYTES) throw new Error(`plan of ${body.byteLength} bytes is larger than the ${MAX_PLAN_OBJECT_BYTES} bytes a plan may have`);
    const ref = { bucket: names.plansBucket, name: planObjectName(names.clusterToken, revision, sha256), size: body.byteLength, sha256 };
    await putPlanObject(link, ref, body, chunkBytes, deps.publishTimeoutMs);
    const msg: RefMsg = { ref, node: names.node, at: Date.now(), revision };
    return enc.encode(JSON.stringify(msg));
  };
  const drain = async () => {
    // re-read the outbox after each publish: plans enqueued while this loop runs go out in it too
    for (let item = ledger.next(); item; item = ledger.next()) {
      if (!link.up || !link.js || stopped) return;
      try {
        // a message written in parts is encoded a part per turn (messageBytes), never joined
        const { bytes: body, sha256 } = await messageBytes(item.texts);
        const limit = inlineLimit(link.nc?.info?.max_payload);
        const byRef = carriedByRef(body.byteLength, limit);
        const payload = byRef ? await putByRef(item.revision, body, sha256, limit) : body;
        const ack = await link.js.publish(names.configSubject, payload, { msgID: item.revision, timeout: deps.publishTimeoutMs });
        ledger.acknowledged(item.revision);
        metrics.published.inc({ type: 'config' });
        if (byRef) {
          metrics.byReference.inc({ direction: 'published' });
          log.info({ revision: item.revision, seq: ack.seq, bytes: body.byteLength, limit }, 'config plan published by reference to the object store');
        }
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
