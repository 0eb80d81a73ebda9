import { randomUUID } from 'node:crypto';
import { DeliverPolicy, RetentionPolicy, StorageType, type JsMsg } from '@nats-io/jetstream';
import type { ClusterStreams } from '../../cluster/port.js';
import type { Logger } from '../../log/logger.js';
import type { Db } from '../../store/db.js';
import { encodeFormEvent, parseFormEvent, type FormStreamEvent } from './events.js';
import type { FormClusterNames } from './names.js';

/** The most messages applied in one SQLite transaction. */
const APPLY_BATCH = 256;
/** How long a publish waits for JetStream's ack. */
const PUBLISH_TIMEOUT_MS = 5_000;

/** Applies messages of the stream, in order, inside the caller's transaction; returns what to do once committed. */
export type ApplyEvents = (items: readonly { seq: number; e: FormStreamEvent }[]) => () => void;

/**
 * The form stream (docs/forms.md "In a cluster"): `publish` resolves once JetStream has stored the
 * message on its replicas (the ack), with its sequence; a resent message (same id within the
 * duplicate window) is stored once. Every node reads the stream in order with an ordered consumer
 * from the last sequence it applied + 1 (`form_stream_state`, written in the transaction that
 * applies the messages), applies what arrives in batches, and starts again from there after a
 * reconnection or when its consumer is lost. Never skips a message: a batch that fails to apply
 * is read again after a pause.
 */
export class FormStream {
  private stopped = false;
  private consuming = false;
  private current: { stop: () => void } | undefined;
  private ready: Promise<void> | undefined;
  private readonly watchdog: NodeJS.Timeout;
  private progress = { seq: 0, at: Date.now() };

  constructor(private readonly deps: {
    streams: ClusterStreams; names: FormClusterNames; replicas: () => number; db: Db; apply: ApplyEvents; log: Logger;
  }) {
    deps.db.prepare('INSERT OR IGNORE INTO form_stream_state (stream, seq) VALUES (?, 0)').run(deps.names.stream);
    deps.streams.onReady(async () => {
      const p = this.ensureStream();
      this.ready = p;
      await p;
      this.current?.stop();
      void this.consumeLoop();
    });
    // an ordered consumer lives on one server: one that is gone, or has messages and makes no
    // progress, is replaced by a fresh one from the last applied sequence
    this.watchdog = setInterval(() => this.watch(), 2_000);
    this.watchdog.unref();
  }

  /** The last sequence this node applied. */
  lastSeq(): number {
    return (this.deps.db.prepare('SELECT seq FROM form_stream_state WHERE stream = ?').get(this.deps.names.stream) as { seq: number }).seq;
  }

  /** Publishes an event; resolves with its stream sequence once JetStream acked it. Rejects when the bus is away or JetStream does not ack. */
  async publish(e: FormStreamEvent): Promise<number> {
    const { streams, names } = this.deps;
    if (!streams.up() || !this.ready) throw new Error('nats not connected');
    await this.ready;
    const ack = await streams.js().publish(names.subject, encodeFormEvent(e), { msgID: randomUUID(), timeout: PUBLISH_TIMEOUT_MS, expect: { streamName: names.stream } });
    return ack.seq;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.watchdog);
    this.current?.stop();
  }

  /** Creates the stream when absent (an existing one is used as it is). */
  private async ensureStream(): Promise<void> {
    const { names } = this.deps;
    const jsm = this.deps.streams.jsm();
    try {
      await jsm.streams.info(names.stream);
    } catch {
      await jsm.streams.add({
        name: names.stream, subjects: [names.subject], retention: RetentionPolicy.Limits, storage: StorageType.File,
        num_replicas: this.deps.replicas(), duplicate_window: 120_000_000_000,
      }).catch(async (err: unknown) => {
        // another node made it meanwhile
        await jsm.streams.info(names.stream).catch(() => { throw err; });
      });
      this.deps.log.info({ stream: names.stream, replicas: this.deps.replicas() }, 'form stream created');
    }
  }

  private watch(): void {
    const c = this.current;
    if (!c || !this.deps.streams.up()) return;
    const seq = this.lastSeq();
    if (seq !== this.progress.seq) { this.progress = { seq, at: Date.now() }; return; }
    let jsm;
    try { jsm = this.deps.streams.jsm(); } catch { return; } // the bus went away meanwhile
    jsm.streams.info(this.deps.names.stream).then((info) => {
      if (info.state.last_seq > seq && Date.now() - this.progress.at > 4_000) {
        this.deps.log.warn({ applied: seq, last: info.state.last_seq }, 'form stream consumer stalled; restarting it');
        this.current?.stop();
      }
    }, () => undefined);
  }

  private async consumeLoop(): Promise<void> {
    if (this.consuming) return;
    this.consuming = true;
    const { streams, names, log } = this.deps;
    try {
      while (!this.stopped && streams.up()) {
        try {
          const consumer = await streams.js().consumers.get(names.stream, {
            filter_subjects: names.subject, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.lastSeq() + 1,
          });
          const messages = await consumer.consume({ expires: 5_000 });
          this.current = messages;
          this.progress = { seq: this.lastSeq(), at: Date.now() };
          let batch: { seq: number; e: FormStreamEvent }[] = [];
          let last = 0;
          for await (const m of messages as AsyncIterable<JsMsg>) {
            if (this.stopped) break;
            last = m.seq;
            const e = parseFormEvent(m.data);
            if (e) batch.push({ seq: m.seq, e });
            else log.error({ seq: m.seq }, 'form stream message of an unknown kind skipped');
            if (m.info.pending > 0 && batch.length < APPLY_BATCH) continue;
            this.applyBatch(batch, last);
            batch = [];
          }
          messages.stop();
          this.current = undefined;
        } catch (err) {
          if (this.stopped) break;
          log.warn({ err }, 'form stream consumer failed; restarting from the last applied message');
          await new Promise((r) => setTimeout(r, 1_000).unref());
        }
      }
    } finally {
      this.consuming = false;
    }
  }

  /** Applies a batch and records `last` as applied, in one transaction; then runs what the batch left to do. */
  private applyBatch(batch: readonly { seq: number; e: FormStreamEvent }[], last: number): void {
    const { db, names } = this.deps;
    const after = db.transaction(() => {
      const from = this.lastSeq();
      const fresh = batch.filter((b) => b.seq > from);
      const then = this.deps.apply(fresh);
      db.prepare('UPDATE form_stream_state SET seq = MAX(seq, ?) WHERE stream = ?').run(last, names.stream);
      return then;
    })();
    after();
  }
}
