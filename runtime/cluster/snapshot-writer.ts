import type { Logger } from '../log/logger.js';
import { purgePoint, snapshotDue, snapshotObjectName, snapshotSeqOfName, type SnapshotPolicy, type SnapshotRecord } from './config-snapshot.js';
import type { GitLeader } from './lease.js';
import type { ConfigLedger } from './ledger.js';
import { decodeToken, type ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';
import { inlineLimit, MAX_PLAN_OBJECT_BYTES, type PlanRef } from './plan-ref.js';
import { putPlanObject } from './plan-store.js';
import { readSnapshot } from './snapshot-read.js';
import { readSnapshotRecord, writeSnapshotRecord } from './snapshot-record.js';
import type { SnapshotMetrics } from './snapshot-metrics.js';

/** How often the lease holder asks whether a snapshot is due. */
const CHECK_MS = 2_000;

/** The revision of a plan object of this cluster (`<cluster>.<revision>.<sha256>`), or undefined for any other name. */
export function planObjectRevision(clusterToken: string, name: string): string | undefined {
  const t = name.split('.');
  return t.length === 3 && t[0] === clusterToken && /^[0-9a-f]{64}$/.test(t[2]!) ? decodeToken(t[1]!) : undefined;
}

/**
 * The snapshot writer (docs/cluster.md "Compaction"): on the git leader lease holder only, every
 * couple of seconds, when `policy` says a snapshot is due, reads the rows and ledger as of its last
 * applied sequence off the DNS thread's connection (snapshot-read.ts), puts them as one object in
 * the plans object store (chunked by the store), moves the record `<cluster>.snapshot` (never
 * backwards), then purges the cluster's subject below the purge point (`policy.keep` sequences
 * below the snapshot stay for nodes a little behind) and deletes the plan objects of the purged
 * plans and the older snapshots. One write at a time; a failure is logged and tried again at the
 * next check. `writeNow` writes one at once, whether due or not: the record, or why none was written.
 */
export function startSnapshotWriter(deps: {
  dbPath: string; link: NatsLink; names: ClusterNames; ledger: ConfigLedger; lease: GitLeader; policy: SnapshotPolicy;
  metrics: SnapshotMetrics; log: Logger; timeoutMs: number;
}): { writeNow(): Promise<SnapshotRecord | string>; stop(): void } {
  const { link, names, ledger, policy, log } = deps;
  let newest: SnapshotRecord | undefined;
  let running: Promise<SnapshotRecord | string> | undefined;
  let stopped = false;
  const since = Date.now();

  const write = async (): Promise<SnapshotRecord | string> => {
    const started = Date.now();
    const r = await readSnapshot(deps.dbPath, { cluster: names.cluster, node: names.node });
    if ('skip' in r) return r.skip;
    if (r.bytes.byteLength > MAX_PLAN_OBJECT_BYTES) { log.warn({ bytes: r.bytes.byteLength }, 'config snapshot larger than a plan object may be; not written'); return 'too large'; }
    if (newest && newest.seq >= r.seq) return 'not newer than the newest snapshot';
    const ref: PlanRef = { bucket: names.plansBucket, name: snapshotObjectName(names.clusterToken, r.seq, r.sha256), size: r.bytes.byteLength, sha256: r.sha256 };
    await putPlanObject(link, ref, r.bytes, inlineLimit(link.nc?.info?.max_payload), deps.timeoutMs);
    const rec: SnapshotRecord = { seq: r.seq, revision: r.revision, node: names.node, at: Date.now(), rows: r.rows, ref, purgedBelow: purgePoint(r.seq, policy.keep) };
    if (!(await writeSnapshotRecord(link, names, rec))) {
      await (await link.objectStore(names.plansBucket)).delete(ref.name).catch(() => undefined);
      newest = await readSnapshotRecord(link, names);
      return 'another node wrote a newer snapshot';
    }
    newest = rec;
    deps.metrics.snapshots.inc({ direction: 'written' });
    deps.metrics.snapshotSeq.set(rec.seq);
    const removed = await compact(rec);
    log.info({ seq: rec.seq, rows: rec.rows, bytes: ref.size, purgedBelow: rec.purgedBelow, objectsRemoved: removed, ms: Date.now() - started }, 'config snapshot written; stream purged below it');
    return rec;
  };

  /** Purges the cluster's subject below the record's purge point, then the objects nobody can need. */
  const compact = async (rec: SnapshotRecord): Promise<number> => {
    const jsm = link.jsm;
    if (!jsm) throw new Error('nats not connected');
    if (rec.purgedBelow > 1) await jsm.streams.purge(names.configStream, { filter: names.configSubject, seq: rec.purgedBelow });
    const os = await link.objectStore(names.plansBucket);
    let removed = 0;
    for (const info of await os.list()) {
      if (info.deleted) continue;
      const snapSeq = snapshotSeqOfName(names.clusterToken, info.name);
      const revision = snapSeq === undefined ? planObjectRevision(names.clusterToken, info.name) : undefined;
      const planSeq = revision === undefined ? undefined : ledger.seqOf(revision);
      const gone = snapSeq !== undefined ? snapSeq < rec.seq : planSeq !== undefined && planSeq < rec.purgedBelow;
      if (!gone) continue;
      await os.delete(info.name);
      removed++;
    }
    return removed;
  };

  const writeNow = (): Promise<SnapshotRecord | string> => (running ??= write().finally(() => { running = undefined; }));

  const check = async () => {
    if (stopped || running || !link.up || !deps.lease.holds()) return;
    try {
      newest = await readSnapshotRecord(link, names);
      if (!snapshotDue(policy, ledger.lastSeq(), newest, Date.now(), since)) return;
      const r = await writeNow();
      if (typeof r === 'string') log.debug({ reason: r }, 'config snapshot not written');
    } catch (err) {
      log.warn({ err }, 'config snapshot failed; trying again later');
    }
  };
  const timer = setInterval(() => void check(), CHECK_MS);
  timer.unref();
  return { writeNow, stop: () => { stopped = true; clearInterval(timer); } };
}
