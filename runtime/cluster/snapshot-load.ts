import type { Core } from '../app.js';
import type { Logger } from '../log/logger.js';
import { Slicer, runSliced } from '../../core/apply/slicer.js';
import { needsSnapshot, parseSnapshotSteps, snapshotPlanSteps, type SnapshotRecord } from './config-snapshot.js';
import type { ConfigLedger } from './ledger.js';
import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';
import { fetchPlanObject } from './plan-store.js';
import { readSnapshotRecord } from './snapshot-record.js';
import type { SnapshotMetrics } from './snapshot-metrics.js';

/** The least time given to fetching a snapshot object (it may be far larger than a plan). */
const FETCH_MIN_MS = 120_000;

/**
 * Before the config consumer reads the stream (docs/cluster.md "Compaction"): a node that joins
 * empty (no ledger position) or whose next message was purged loads the newest snapshot. The
 * object is fetched and checked (size, SHA-256), parsed in slices, and applied as one plan
 * through `core.applySliced` under the write gate (the rows it lacks created, those that differ
 * updated, and, for a node that had a position, the rows the snapshot lacks deleted), with the
 * snapshot's ledger entries in the same transaction, so the node resumes at the snapshot's
 * sequence + 1. Returns the record applied, or undefined when none was needed. Errors: a record
 * or object that cannot be read or applied throws (the consumer retries after a pause).
 */
export async function loadSnapshotIfBehind(
  deps: { core: Pick<Core, 'applySliced' | 'applyGate' | 'holder'>; link: NatsLink; names: ClusterNames; ledger: ConfigLedger; log: Logger; metrics: SnapshotMetrics; timeoutMs: number },
  known?: SnapshotRecord,
): Promise<SnapshotRecord | undefined> {
  const { core, link, names, ledger, log } = deps;
  const rec = known ?? await readSnapshotRecord(link, names);
  const last = ledger.lastSeq();
  if (!needsSnapshot(last, rec) || !rec) return undefined;
  const started = Date.now();
  log.info({ seq: rec.seq, rows: rec.rows, bytes: rec.ref.size, lastSeq: last, purgedBelow: rec.purgedBelow }, 'config snapshot loading');
  const data = await fetchPlanObject(link, rec.ref, Math.max(FETCH_MIN_MS, deps.timeoutMs));
  const slicer = new Slicer(10);
  const snap = await runSliced(parseSnapshotSteps(data), slicer);
  if (snap.header.seq !== rec.seq || snap.header.cluster !== names.cluster) throw new Error(`config snapshot ${rec.ref.name} is of ${snap.header.cluster} at seq ${snap.header.seq}, the record says ${names.cluster} at ${rec.seq}`);
  const hold = await core.applyGate.acquire();
  let changes = 0;
  try {
    const { plan, rowJson } = await runSliced(snapshotPlanSteps(core.holder.current, snap.rows, `snapshot:${rec.seq}`, last > 0), slicer);
    changes = plan.changes.length;
    await core.applySliced(plan, {
      force: true, fromStream: true, held: hold, rowJson,
      meta: { cluster: { seq: rec.seq, node: rec.node, snapshot: true }, planId: rec.ref.sha256 },
      inTransaction: () => ledger.recordSnapshot(snap.ledger, Date.now()),
    });
  } finally {
    hold.release();
  }
  deps.metrics.snapshots.inc({ direction: 'loaded' });
  deps.metrics.snapshotSeq.set(rec.seq);
  log.info({ seq: rec.seq, rows: snap.rows.length, changes, ms: Date.now() - started }, 'config snapshot applied; replaying the stream after it');
  return rec;
}
