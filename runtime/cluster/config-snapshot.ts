import { kindInfo } from '../../core/model/kinds.js';
import type { Row } from '../../core/model/types.js';
import { jsonEqual, diffFields } from '../../core/plan/diff.js';
import { orderChanges, summarise } from '../../core/plan/changes.js';
import type { Change, Plan } from '../../core/plan/types.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';
import type { PlanRef } from './plan-ref.js';

/**
 * Compaction of the config stream (docs/cluster.md "Compaction"), the pure part: the snapshot
 * object's format (rows as the store holds them, at one stream sequence), the record naming the
 * newest snapshot, when a node loads one, when the lease holder writes one, and the plan that
 * turns a node's rows into the snapshot's.
 *
 * The object is UTF-8 lines: a header line (`SnapshotHeader`), then one line per ledger entry
 * (`[seq, revision, originNode, changes]`, oldest first), then one line per row, the `data` text
 * of the `resources` table as it is, in storage order.
 */

/** The first line of a snapshot object. */
export interface SnapshotHeader {
  snapshot: 1;
  cluster: string;
  /** the stream sequence the rows are as of (the writer's last applied sequence) */
  seq: number;
  /** the revision the writer applied at `seq` */
  revision: string;
  node: string;
  at: number;
  ledger: number;
  rows: number;
}

/** One ledger entry carried by a snapshot: `[seq, revision, originNode, changes]`. */
export type LedgerEntry = [number, string, string, number];

/** The KV record `<cluster>.snapshot` in `state.config.kvBucket`: the newest snapshot. */
export interface SnapshotRecord {
  seq: number;
  revision: string;
  node: string;
  at: number;
  rows: number;
  /** the object (in the plans object store) and its size and SHA-256 */
  ref: PlanRef;
  /** messages of the cluster's subject below this sequence are purged (or about to be) */
  purgedBelow: number;
}

/** KV key of the snapshot record. */
export function snapshotKey(clusterToken: string): string {
  return `${clusterToken}.snapshot`;
}

/** Object name of a snapshot: `<cluster>.snapshot.<seq>.<sha256>` (never a plan object's name: revisions are escaped tokens, `snapshot` has no sequence after it there). */
export function snapshotObjectName(clusterToken: string, seq: number, sha256: string): string {
  return `${clusterToken}.snapshot.${seq}.${sha256}`;
}

/** The sequence of a snapshot object of this cluster, from its name; undefined for any other object. */
export function snapshotSeqOfName(clusterToken: string, name: string): number | undefined {
  const m = /^snapshot\.(\d+)\.[0-9a-f]{64}$/.exec(name.startsWith(`${clusterToken}.`) ? name.slice(clusterToken.length + 1) : '');
  return m ? Number(m[1]) : undefined;
}

const SHA_RE = /^[0-9a-f]{64}$/;
const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** Shape check of a snapshot record read from KV; undefined when it is not one. */
export function parseSnapshotRecord(v: unknown): SnapshotRecord | undefined {
  const r = v as Partial<SnapshotRecord> | null | undefined;
  if (typeof r !== 'object' || r === null) return undefined;
  const ref = r.ref as Partial<PlanRef> | undefined;
  if (!isSeq(r.seq) || r.seq === 0 || !isSeq(r.purgedBelow) || !isSeq(r.rows) || typeof r.revision !== 'string' || typeof r.node !== 'string' || typeof r.at !== 'number') return undefined;
  if (typeof ref !== 'object' || ref === null || typeof ref.bucket !== 'string' || typeof ref.name !== 'string' || !isSeq(ref.size) || ref.size === 0 || typeof ref.sha256 !== 'string' || !SHA_RE.test(ref.sha256)) return undefined;
  return { seq: r.seq, revision: r.revision, node: r.node, at: r.at, rows: r.rows, purgedBelow: r.purgedBelow, ref: { bucket: ref.bucket, name: ref.name, size: ref.size, sha256: ref.sha256 } };
}

/**
 * Whether a node whose ledger ends at `lastSeq` loads the snapshot `rec` before reading the
 * stream: when it joins empty (no position) or its next message was purged; never a snapshot at
 * or below its position.
 */
export function needsSnapshot(lastSeq: number, rec: SnapshotRecord | undefined): boolean {
  if (!rec || rec.seq <= lastSeq) return false;
  return lastSeq === 0 || lastSeq + 1 < rec.purgedBelow;
}

/** When the lease holder writes a snapshot (`every` plans and `intervalMs`, 0 = that trigger off). */
export interface SnapshotPolicy { every: number; intervalMs: number; keep: number }

/**
 * Whether to write a snapshot now: `every` sequences past the newest snapshot (from the start of
 * the stream when there is none), or `intervalMs` since it (since `since`, when the writer started,
 * when there is none) with at least one sequence past it.
 */
export function snapshotDue(p: SnapshotPolicy, lastSeq: number, newest: { seq: number; at: number } | undefined, now: number, since = 0): boolean {
  const base = newest?.seq ?? 0;
  if (lastSeq <= base) return false;
  if (p.every > 0 && lastSeq - base >= p.every) return true;
  return p.intervalMs > 0 && now - (newest?.at ?? since) >= p.intervalMs;
}

/** The first sequence kept in the stream once a snapshot at `seq` exists: `keep` sequences at or below it stay. */
export function purgePoint(seq: number, keep: number): number {
  return Math.max(1, seq - Math.max(0, keep) + 1);
}

/** The header line and ledger lines of a snapshot (the row lines follow as the store holds them). */
export function snapshotHead(h: SnapshotHeader, ledger: readonly LedgerEntry[]): string {
  let out = `${JSON.stringify(h)}\n`;
  for (const e of ledger) out += `${JSON.stringify(e)}\n`;
  return out;
}

/** A snapshot as read back: its header, ledger entries, and each row with the text it was stored as. */
export interface ParsedSnapshot { header: SnapshotHeader; ledger: LedgerEntry[]; rows: { row: Row; json: string }[] }

/**
 * Parses a snapshot object's bytes as steps, one line at a time (a pause between lines: the caller
 * slices them, so no turn decodes or splits the whole object). Errors: throws on a header, ledger
 * line or row that is not what the format says, or on more or fewer lines than the header says.
 */
export function* parseSnapshotSteps(data: Uint8Array): Generator<void, ParsedSnapshot, void> {
  const dec = new TextDecoder();
  let pos = 0;
  let n = 0;
  const line = (): string | undefined => {
    if (pos >= data.length) return undefined;
    let end = data.indexOf(10, pos);
    if (end < 0) end = data.length;
    const text = dec.decode(data.subarray(pos, end));
    pos = end + 1;
    n++;
    return text;
  };
  const header = JSON.parse(line() ?? 'null') as SnapshotHeader;
  if (header?.snapshot !== 1 || !isSeq(header.seq) || !isSeq(header.ledger) || !isSeq(header.rows)) throw new Error('not a config snapshot (bad header)');
  const short = () => new Error(`config snapshot of ${n} lines, the header says ${1 + header.ledger + header.rows}`);
  const ledger: LedgerEntry[] = [];
  for (let i = 0; i < header.ledger; i++) {
    const text = line();
    if (text === undefined) throw short();
    const e = JSON.parse(text) as LedgerEntry;
    if (!Array.isArray(e) || !isSeq(e[0]) || typeof e[1] !== 'string' || typeof e[2] !== 'string' || !isSeq(e[3])) throw new Error(`config snapshot ledger line ${n} is malformed`);
    ledger.push(e);
    yield;
  }
  const rows: { row: Row; json: string }[] = [];
  for (let i = 0; i < header.rows; i++) {
    const json = line();
    if (json === undefined) throw short();
    const row = JSON.parse(json) as Row;
    if (typeof row?.kind !== 'string' || typeof row.id !== 'string') throw new Error(`config snapshot row line ${n} has no kind or id`);
    rows.push({ row, json });
    yield;
  }
  if (line() !== undefined) throw new Error(`config snapshot has more lines than the ${1 + header.ledger + header.rows} its header says`);
  return { header, ledger, rows };
}

/**
 * The plan that turns the rows of `current` into the snapshot's, as steps: a create for each row
 * missing here, an update for each row whose content differs, and, with `deletes`, a delete for
 * each row here that the snapshot lacks (a node behind the purge point; a node that joins empty
 * keeps rows it had before config sync, as a replay from the start would). Rows of the config
 * file (`origin: config`, never stored nor synced) are left alone. `rowJson` is the stored text of
 * each change's row, by index in the plan's changes.
 */
export function* snapshotPlanSteps(
  current: Snapshot, rows: readonly { row: Row; json: string }[], revision: string, deletes: boolean,
): Generator<void, { plan: Plan; rowJson: (string | undefined)[] }, void> {
  const changes: Change[] = [];
  const text = new Map<Change, string>();
  const seen = new Map<string, Set<string>>();
  for (const { row, json } of rows) {
    let ids = seen.get(row.kind);
    if (!ids) seen.set(row.kind, (ids = new Set()));
    ids.add(row.id);
    const before = current.rows.get(row.kind)?.get(row.id);
    const label = kindInfo(row.kind).label(row);
    if (!before) changes.push({ op: 'create', kind: row.kind, id: row.id, label, after: row, fields: [] });
    else if (!jsonEqual(before, row)) changes.push({ op: 'update', kind: row.kind, id: row.id, label, before, after: row, fields: diffFields(before, row) });
    else { yield; continue; }
    text.set(changes.at(-1)!, json);
    yield;
  }
  if (deletes) {
    for (const [kind, table] of current.rows) {
      for (const [id, before] of table) {
        if (before.origin === 'config' || seen.get(kind)?.has(id)) continue;
        changes.push({ op: 'delete', kind, id, label: kindInfo(kind).label(before), before, fields: [] });
        yield;
      }
    }
  }
  const ordered = orderChanges(changes);
  const counts = summarise(ordered);
  const plan: Plan = {
    revision, origin: 'api', baseVersion: current.version, changes: ordered, counts,
    safety: { safe: true, existing: 0, updates: counts.update, deletes: counts.delete, maxChangePercent: 100, minExisting: 0 },
  };
  return { plan, rowJson: ordered.map((c) => text.get(c)) };
}
