import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { Core } from '../app.js';
import type { Logger } from '../log/logger.js';
import { applyConfigMessage } from './config-apply.js';
import { parseConfigMsg, type ConfigMsg } from './config-msg.js';
import type { ConfigLedger } from './ledger.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import { sleep, type NatsLink } from './nats-link.js';

/** Where the consumer stands: the last applied sequence and revision, and why it stalled. */
export interface ConsumerStatus { lastSeq: number; lastRevision: string; stalled: string | undefined }

/** Reads the config stream in order and applies it (config-apply.ts). */
export interface ConfigConsumer {
  /** (Re)starts reading from the ledger's last applied sequence + 1; call after each (re)connection. */
  restart(): void;
  status(): ConsumerStatus;
  stop(): void;
}

/**
 * The config-stream consumer: an ordered consumer from the last applied sequence + 1 (no durable
 * consumer needed: the ledger is the position). Messages that are not plans are skipped by every
 * node alike; a plan that cannot be applied within `applyTimeoutMs` stops the consumer, which
 * retries from the same sequence after a pause (never skips). A watchdog replaces a consumer whose
 * server died (docs/cluster.md "Config sync"). Never throws.
 */
export function startConfigConsumer(deps: {
  core: Pick<Core, 'apply' | 'holder'>; link: NatsLink; names: ClusterNames; ledger: ConfigLedger; metrics: ClusterMetrics; log: Logger; applyTimeoutMs: number;
}): ConfigConsumer {
  const { link, names, ledger, metrics, log } = deps;
  const st: ConsumerStatus = { lastSeq: ledger.lastSeq(), lastRevision: ledger.lastRevision(), stalled: undefined };
  metrics.configSeq.set({ peer: names.node }, st.lastSeq);
  let stopped = false;
  let consuming = false;
  let current: { stop: () => void } | undefined;
  let watch: { consumer: { info: (cached?: boolean) => Promise<{ num_pending: number }> }; progressAt: number; seq: number } | undefined;

  /** Applies one message; false when it could not be applied in time. */
  const apply = async (seq: number, msg: ConfigMsg): Promise<boolean> => {
    const r = await applyConfigMessage({ core: deps.core, ledger, timeoutMs: deps.applyTimeoutMs }, seq, msg);
    if (!r.applied) {
      st.stalled = r.reason;
      metrics.applyFailures.inc();
      log.error({ err: r.err, seq, revision: msg.plan.revision }, 'config plan could not be applied within applyTimeout; retrying later from the same sequence');
      return false;
    }
    st.lastSeq = seq; st.lastRevision = msg.plan.revision; st.stalled = undefined;
    metrics.received.inc({ type: 'config' });
    metrics.configSeq.set({ peer: names.node }, seq);
    if (msg.node !== names.node) metrics.mergeLag.observe({ type: 'config' }, Math.max(0, Date.now() - msg.at) / 1000);
    return true;
  };

  // Watchdog: an ordered consumer lives on one server; when that server dies the client may take
  // a while to notice. Every 2 s: a consumer that is gone, or that has pending messages and made
  // no progress for 4 s, is replaced by a fresh one from the ledger.
  const watchdog = setInterval(() => {
    const w = watch;
    if (!w || !current || !link.up) return;
    const seq = ledger.lastSeq();
    if (seq !== w.seq) { w.seq = seq; w.progressAt = Date.now(); return; }
    w.consumer.info(false).then((info) => {
      if (info.num_pending > 0 && Date.now() - w.progressAt > 4_000) { log.warn({ pending: info.num_pending }, 'config consumer stalled; restarting it'); current?.stop(); }
    }, () => { log.warn('config consumer lost; restarting it'); current?.stop(); });
  }, 2_000);
  watchdog.unref();

  const consumeLoop = async () => {
    if (consuming) return;
    consuming = true;
    try {
      while (!stopped && link.up && link.js) {
        const startSeq = ledger.lastSeq() + 1;
        try {
          const consumer = await link.js.consumers.get(names.configStream, {
            filter_subjects: names.configSubject, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq,
          });
          // short pull expiry: the client's idle heartbeats (half of it) notice a dead server fast
          const messages = await consumer.consume({ expires: 5_000 });
          current = messages;
          watch = { consumer, progressAt: Date.now(), seq: ledger.lastSeq() };
          let failed = false;
          for await (const m of messages as AsyncIterable<JsMsg>) {
            if (stopped) break;
            const body = parseConfigMsg(m.data);
            // not a plan at all: no node can apply it, so every node skips it alike
            if (!body) { log.error({ seq: m.seq }, 'config message that is not a plan skipped'); continue; }
            if (m.seq <= ledger.lastSeq()) continue;
            if (!(await apply(m.seq, body))) { failed = true; break; }
          }
          messages.stop();
          current = undefined;
          if (failed) await sleep(Math.max(1_000, deps.applyTimeoutMs));
        } catch (err) {
          if (stopped) break;
          log.warn({ err }, 'config consumer failed; restarting');
          await sleep(1_000);
        }
      }
    } finally {
      consuming = false;
    }
  };

  return {
    restart() {
      // after a reconnect the consumer may sit on a server that is gone: start a fresh one from
      // the ledger (the loop resumes at the last applied sequence + 1)
      current?.stop();
      void consumeLoop();
    },
    status: () => ({ ...st }),
    stop() { stopped = true; clearInterval(watchdog); current?.stop(); },
  };
}
