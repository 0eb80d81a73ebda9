import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../log/logger.js';
import type { ConfigAdmission, ConfigGate, ConfigStep } from './config-gate.js';
import { parseConfigJson } from './config-msg.js';
import type { ConfigLedger } from './ledger.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import { sleep, type NatsLink } from './nats-link.js';
import { isRefShaped, parseRefMsg } from './plan-ref.js';
import { fetchPlanObject } from './plan-store.js';

/**
 * Where the consumer stands: the last applied sequence and revision, why it stalled, and the
 * canary plan it holds (with the messages held behind it, the canary plan included).
 */
export interface ConsumerStatus {
  lastSeq: number; lastRevision: string; stalled: string | undefined;
  holding: { revision: string; seq: number; messages: number } | undefined;
}

/** Reads the config stream in order and applies it (config-apply.ts). */
export interface ConfigConsumer {
  /** (Re)starts reading from the ledger's last applied sequence + 1; call after each (re)connection. */
  restart(): void;
  status(): ConsumerStatus;
  stop(): void;
}

/** The consumer's side of compaction (docs/cluster.md "Compaction"; snapshot-load.ts). */
export interface ConsumerSnapshots {
  /** loads the newest snapshot when this node is empty or behind the purge point; true when it did. Throws when it cannot. */
  catchUp(): Promise<boolean>;
  /** true when the messages from `seq` on were purged before this node read them (it must load the snapshot) */
  purgedFrom(seq: number): Promise<boolean>;
}

/**
 * The config-stream consumer: an ordered consumer from the last applied sequence + 1 (no durable
 * consumer needed: the ledger is the position). Messages the gate cannot parse (not plans, nor
 * what an extension adds: canary decisions) are skipped by every node alike; each other message
 * passes the gate (config-gate.ts; with gitops, the canary gate), whose steps apply it, hold it
 * behind a canary plan, or release what it held;
 * a step that cannot be run within `applyTimeoutMs` stops the consumer, which retries from the
 * same sequence after a pause (never skips). A reference message (a plan too large for one
 * message, docs/cluster.md "Large plans") is replaced by the plan it names, fetched from the object
 * store and checked within `applyTimeoutMs`, at the reference's place in the stream; a fetch that
 * fails stalls the consumer like an apply that fails. A watchdog replaces a consumer whose server
 * died (docs/cluster.md "Config sync"). Never throws.
 */
export function startConfigConsumer(deps: {
  link: NatsLink; names: ClusterNames; ledger: ConfigLedger; gate: ConfigGate;
  metrics: ClusterMetrics; log: Logger; applyTimeoutMs: number; snapshots?: ConsumerSnapshots;
}): ConfigConsumer {
  const { link, names, ledger, metrics, log } = deps;
  const st: ConsumerStatus = { lastSeq: ledger.lastSeq(), lastRevision: ledger.lastRevision(), stalled: undefined, holding: undefined };
  metrics.configSeq.set({ peer: names.node }, st.lastSeq);
  let stopped = false;
  let consuming = false;
  let current: { stop: () => void } | undefined;
  let watch: { consumer: { info: (cached?: boolean) => Promise<{ num_pending: number }> }; progressAt: number; seq: number } | undefined;
  const { gate } = deps;
  type Item = { seq: number };

  /** Runs one gate step; false when it could not be run in time. */
  const run = async (step: ConfigStep): Promise<boolean> => {
    const { revision } = step;
    const r = await step.run();
    if (!r.applied) {
      st.stalled = r.reason;
      metrics.applyFailures.inc();
      log.error({ err: r.err, seq: step.seq, revision }, 'config plan could not be applied within applyTimeout; retrying later from the same sequence');
      return false;
    }
    if (step.note) log[step.note.level](step.note.fields, step.note.message);
    if (step.holds) return true;
    st.lastSeq = step.seq; st.lastRevision = revision; st.stalled = undefined;
    metrics.received.inc({ type: 'config' });
    metrics.configSeq.set({ peer: names.node }, step.seq);
    if (step.msg && step.msg.node !== names.node) metrics.mergeLag.observe({ type: 'config' }, Math.max(0, Date.now() - step.msg.at) / 1000);
    return true;
  };

  /**
   * The stream item of one message: its own body, or the plan its reference names. undefined: skip
   * it (not a plan, or already applied); 'failed': the referenced plan could not be fetched, stall.
   */
  const readItem = async (m: JsMsg): Promise<Item | undefined | 'failed'> => {
    const body = parseConfigJson(m.data);
    const ref = isRefShaped(body) ? parseRefMsg(body) : undefined;
    if (!ref) {
      const item = gate.parse(m.seq, body);
      // not a plan at all: no node can apply it, so every node skips it alike
      if (!item) { log.error({ seq: m.seq }, 'config message that is not a plan skipped'); return undefined; }
      return m.seq <= ledger.lastSeq() ? undefined : item;
    }
    if (m.seq <= ledger.lastSeq()) return undefined;
    // applied already (published twice, or carried by a snapshot): skipped without its object,
    // which compaction may have removed with the first message
    if (ledger.seqOf(ref.revision) !== undefined) return undefined;
    try {
      const data = await fetchPlanObject(link, ref.ref, deps.applyTimeoutMs);
      metrics.byReference.inc({ direction: 'received' });
      const item = gate.parse(m.seq, parseConfigJson(data));
      // the bytes are the ones published (size and digest checked): every node skips them alike
      if (!item) log.error({ seq: m.seq, revision: ref.revision, object: ref.ref.name }, 'config plan object that is not a plan skipped');
      return item;
    } catch (err) {
      st.stalled = `seq ${m.seq} revision ${ref.revision}: ${(err as Error).message}`;
      metrics.applyFailures.inc();
      log.error({ err, seq: m.seq, revision: ref.revision, bucket: ref.ref.bucket, object: ref.ref.name }, 'config plan object could not be fetched; retrying later from the same sequence');
      return 'failed';
    }
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
        try {
          if (deps.snapshots && await deps.snapshots.catchUp()) {
            st.lastSeq = ledger.lastSeq(); st.lastRevision = ledger.lastRevision(); st.stalled = undefined;
            metrics.configSeq.set({ peer: names.node }, st.lastSeq);
          }
        } catch (err) {
          st.stalled = `config snapshot: ${(err as Error).message}`;
          metrics.applyFailures.inc();
          log.error({ err }, 'config snapshot could not be loaded; retrying later');
          await sleep(Math.max(1_000, deps.applyTimeoutMs));
          continue;
        }
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
          // a fresh consumer starts at the first message not recorded: a held canary plan is read again
          const admission: ConfigAdmission<Item> = gate.open();
          st.holding = undefined;
          let next = startSeq;
          for await (const m of messages as AsyncIterable<JsMsg>) {
            if (stopped) break;
            // a gap: other subjects' messages, or a purge this node fell behind (then the snapshot)
            if (m.seq !== next && deps.snapshots && await deps.snapshots.purgedFrom(next)) {
              log.warn({ expected: next, got: m.seq }, 'config messages purged before this node read them; loading the snapshot');
              break;
            }
            next = m.seq + 1;
            const item = await readItem(m);
            if (item === 'failed') { failed = true; break; }
            if (!item) continue;
            const steps = admission.admit(item);
            st.holding = admission.holding();
            for (const step of steps) if (!(await run(step))) { failed = true; break; }
            if (failed) break;
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
