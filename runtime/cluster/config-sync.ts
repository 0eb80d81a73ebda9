import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { Core } from '../app.js';
import type { Plan } from '../../controller/plan/types.js';
import type { ConfigLedger } from './ledger.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import { sleep, type NatsLink } from './nats-link.js';
import { rebasePlan } from './rebase.js';

/** The body of a config-stream message. */
export interface ConfigMsg {
  plan: Plan;
  node: string;
  /** ms timestamp when the plan was applied on its origin node */
  at: number;
}

/**
 * Config sync over the JetStream stream `state.config.stream` (docs/cluster.md "Config sync").
 * Publishing: every plan applied here that did not come from the stream goes to a SQLite outbox (in
 * the apply's own transaction: `core.apply` is wrapped) and is published on `<subjectPrefix>.<cluster>` with the revision as message id (the stream drops a
 * re-publish inside its duplicate window); the latest revision is put in KV `state.config.kvBucket`.
 * Applying: an ordered consumer reads from the last applied sequence + 1; each message is rebased
 * on the local rows and applied through `core.apply` together with its ledger row in one SQLite
 * transaction, so a node killed at any point resumes exactly where it stopped. A revision already
 * in the ledger is skipped. A plan that cannot be applied within `applyTimeout` stops the consumer,
 * which retries from the same sequence (never skips).
 */
export function startConfigSync(deps: {
  core: Core; link: NatsLink; names: ClusterNames; ledger: ConfigLedger; metrics: ClusterMetrics; applyTimeoutMs: number;
}): { flush: () => Promise<void>; status: () => { lastSeq: number; lastRevision: string; outbox: number; stalled: string | undefined }; stop: () => void } {
  const { core, link, names, ledger, metrics } = deps;
  const log = core.log.child({ component: 'config-sync' });
  const fromStream = new WeakSet<Plan>();
  const enc = new TextEncoder();
  let stopped = false;
  let stalled: string | undefined;
  let lastSeq = ledger.lastSeq();
  let lastRevision = ledger.lastRevision();
  metrics.configSeq.set({ peer: names.node }, lastSeq);

  const enqueue = (plan: Plan) => {
    if (fromStream.has(plan) || plan.changes.length === 0) return;
    const msg: ConfigMsg = { plan, node: names.node, at: Date.now() };
    ledger.enqueue(plan.revision, JSON.stringify(msg), msg.at); // INSERT OR IGNORE: once per revision
  };
  // The outbox row is written in the same SQLite transaction as the plan's rows, so a node killed
  // right after a local apply still publishes the plan when it comes back. A plan that apply
  // refuses (409, unsafe) rolls its outbox row back with it.
  const originalApply = core.apply;
  core.apply = (plan, opts) => core.store.transaction(() => { enqueue(plan); return originalApply(plan, opts); });
  // plans applied some other way than core.apply are still published (after the fact)
  const offApplied = core.bus.on('plan_applied', ({ plan }) => {
    enqueue(plan);
    if (!fromStream.has(plan)) void flush();
  });

  let flushing: Promise<void> | undefined;
  const flush = (): Promise<void> => (flushing ??= runFlush().finally(() => { flushing = undefined; }));
  const runFlush = async () => {
    // re-read the outbox after each publish: plans enqueued while this loop runs go out in it too
    for (let item = ledger.pending()[0]; item; item = ledger.pending()[0]) {
      if (!link.up || !link.js || stopped) return;
      try {
        const ack = await link.js.publish(names.configSubject, enc.encode(item.body), { msgID: item.revision, timeout: deps.applyTimeoutMs });
        ledger.acknowledged(item.revision);
        metrics.published.inc({ type: 'config' });
        if (ack.seq > (latestWanted?.seq ?? 0)) latestWanted = { revision: item.revision, seq: ack.seq };
        void syncLatest();
      } catch (err) {
        log.warn({ err, revision: item.revision }, 'config publish failed; kept in the outbox');
        setTimeout(() => void flush(), 1_000).unref();
        return;
      }
    }
  };

  /**
   * Keeps `<cluster>.latest` in KV at the highest stream sequence: compare-and-set on the key's
   * revision, so a slower node never overwrites a newer entry with an older one.
   */
  let latestWanted: { revision: string; seq: number } | undefined;
  let latestSyncing: Promise<void> | undefined;
  /** Writes `latestWanted` to KV; retried every second while it fails (e.g. a KV leader election). */
  const syncLatest = (): Promise<void> => (latestSyncing ??= (async () => {
    for (let attempt = 0; attempt < 60 && latestWanted && !stopped; attempt++) {
      const want = latestWanted;
      try {
        await recordLatest(want.revision, want.seq);
        metrics.kvOps.inc({ bucket: names.configBucket, op: 'put', result: 'ok' });
        if (latestWanted === want) { latestWanted = undefined; return; }
      } catch {
        metrics.kvOps.inc({ bucket: names.configBucket, op: 'put', result: 'error' });
        await sleep(1_000);
      }
    }
  })().finally(() => { latestSyncing = undefined; }));
  const recordLatest = async (revision: string, seq: number) => {
    const kv = await link.bucket(names.configBucket);
    const key = `${names.clusterToken}.latest`;
    const value = enc.encode(JSON.stringify({ revision, seq, node: names.node, at: Date.now() }));
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = await kv.get(key);
      const curSeq = cur && cur.operation === 'PUT' ? (cur.json<{ seq: number }>().seq ?? 0) : 0;
      if (curSeq >= seq) return;
      try {
        if (cur) await kv.update(key, value, cur.revision); else await kv.create(key, value);
        return;
      } catch (err) {
        if (attempt === 4) throw err; // someone else wrote it first: read again, a few times
      }
    }
  };

  /** Applies one stream message; returns false when it could not be applied in time. */
  const applyMessage = async (seq: number, msg: ConfigMsg): Promise<boolean> => {
    if (ledger.seqOf(msg.plan.revision) !== undefined) return true; // published twice: applied once
    const deadline = Date.now() + deps.applyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const rebased = rebasePlan(msg.plan, core.holder.current);
        fromStream.add(rebased);
        core.store.transaction(() => {
          // ledger row first: if it fails nothing is applied; if apply fails the row rolls back
          ledger.recordApplied(seq, msg.plan.revision, msg.node, rebased.changes.length, Date.now());
          if (rebased.changes.length > 0) core.apply(rebased, { force: true, meta: { cluster: { seq, node: msg.node } } });
        });
        lastSeq = seq; lastRevision = msg.plan.revision; stalled = undefined;
        metrics.received.inc({ type: 'config' });
        metrics.configSeq.set({ peer: names.node }, seq);
        if (msg.node !== names.node) metrics.mergeLag.observe({ type: 'config' }, Math.max(0, Date.now() - msg.at) / 1000);
        return true;
      } catch (err) {
        if (Date.now() + 100 > deadline) {
          stalled = `seq ${seq} revision ${msg.plan.revision}: ${(err as Error).message}`;
          metrics.applyFailures.inc();
          log.error({ err, seq, revision: msg.plan.revision }, 'config plan could not be applied within applyTimeout; retrying later from the same sequence');
          return false;
        }
        await sleep(Math.min(100 * 2 ** attempt, 1_000));
      }
    }
  };

  let consuming = false;
  let current: { stop: () => void } | undefined;
  let watch: { consumer: { info: (cached?: boolean) => Promise<{ num_pending: number }> }; progressAt: number; seq: number } | undefined;
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
            let body: ConfigMsg;
            try { body = m.json<ConfigMsg>(); } catch { body = undefined as unknown as ConfigMsg; }
            // not a plan at all: no node can apply it, so every node skips it alike
            if (!isConfigMsg(body)) { log.error({ seq: m.seq }, 'config message that is not a plan skipped'); continue; }
            if (m.seq <= ledger.lastSeq()) continue;
            if (!(await applyMessage(m.seq, body))) { failed = true; break; }
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

  link.onReady(async () => {
    const jsm = link.jsm!;
    const cfg = { name: names.configStream, subjects: [`${core.config.state.config.subjectPrefix}.>`], num_replicas: link.replicas(), duplicate_window: 120_000_000_000 };
    try { await jsm.streams.info(names.configStream); } catch { await jsm.streams.add(cfg); }
    // after a reconnect the consumer may sit on a server that is gone: start a fresh one from the
    // ledger (the loop resumes at the last applied sequence + 1)
    current?.stop();
    void consumeLoop();
    void flush();
  });

  return {
    flush,
    status: () => ({ lastSeq, lastRevision, outbox: ledger.pending().length, stalled }),
    stop: () => { stopped = true; clearInterval(watchdog); current?.stop(); offApplied(); core.apply = originalApply; },
  };
}

/** Shape check of a stream message before it is applied. */
export function isConfigMsg(v: unknown): v is ConfigMsg {
  const m = v as Partial<ConfigMsg> | undefined;
  return typeof m === 'object' && m !== null && typeof m.node === 'string' && typeof m.at === 'number'
    && typeof m.plan === 'object' && m.plan !== null && typeof m.plan.revision === 'string' && m.plan.revision !== ''
    && Array.isArray(m.plan.changes) && typeof m.plan.origin === 'string';
}
