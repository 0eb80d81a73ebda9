import Database from 'better-sqlite3';
import { Slicer } from '../../core/apply/slicer.js';
import { snapshotHead, type LedgerEntry, type SnapshotHeader } from './config-snapshot.js';
import { messageBytes } from './plan-ref.js';

/** A snapshot read from the database: its bytes, their SHA-256, and what it holds. */
export interface SnapshotBytes { bytes: Uint8Array; sha256: string; seq: number; revision: string; rows: number }

/** Why no snapshot is read now (the writer tries again later). */
export type SnapshotSkip = { skip: string };

/** Text gathered per part of the snapshot before a pause (the object store cuts its own chunks). */
const PART_CHARS = 1024 * 1024;

/**
 * Reads the rows and the ledger of the database at `path` as one snapshot (config-snapshot.ts),
 * on a read-only connection of its own in one read transaction, so the rows are exactly those of
 * the last applied sequence (every stream message commits its rows and its ledger row together),
 * and in slices of about 10 ms between turns of the event loop, so DNS keeps answering while a
 * large state is read (docs/architecture.md "Large applies"). The writes of the node go on
 * meanwhile on the main connection (WAL). Skips when nothing was applied yet or a canary revision
 * is baking (the snapshot carries no canary state). Errors: whatever SQLite throws.
 */
export async function readSnapshot(path: string, who: { cluster: string; node: string }, now: number = Date.now()): Promise<SnapshotBytes | SnapshotSkip> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  const slicer = new Slicer(10);
  try {
    db.pragma('busy_timeout = 5000');
    db.exec('BEGIN');
    const last = db.prepare('SELECT seq, revision FROM cluster_applied ORDER BY seq DESC LIMIT 1').get() as { seq: number; revision: string } | undefined;
    if (!last) return { skip: 'nothing applied yet' };
    const baking = db.prepare("SELECT revision FROM cluster_canary WHERE phase = 'baking' LIMIT 1").pluck().get() as string | undefined;
    if (baking !== undefined) return { skip: `canary revision ${baking} is baking` };
    const ledgerCount = db.prepare('SELECT COUNT(*) FROM cluster_applied').pluck().get() as number;
    const rowCount = db.prepare('SELECT COUNT(*) FROM resources').pluck().get() as number;
    const header: SnapshotHeader = { snapshot: 1, cluster: who.cluster, seq: last.seq, revision: last.revision, node: who.node, at: now, ledger: ledgerCount, rows: rowCount };
    const texts: string[] = [snapshotHead(header, [])];
    let part = '';
    const add = async (line: string) => {
      part += `${line}\n`;
      if (part.length >= PART_CHARS) { texts.push(part); part = ''; }
      await slicer.maybePause();
    };
    let entries = 0;
    for (const r of db.prepare('SELECT seq, revision, origin_node, changes FROM cluster_applied ORDER BY seq').raw().iterate() as Iterable<LedgerEntry>) {
      await add(JSON.stringify(r));
      entries++;
    }
    let rows = 0;
    for (const data of db.prepare('SELECT data FROM resources ORDER BY rowid').pluck().iterate() as Iterable<string>) {
      await add(data);
      rows++;
    }
    if (part !== '') texts.push(part);
    if (rows !== rowCount || entries !== ledgerCount) throw new Error(`read ${entries} ledger entries and ${rows} rows, counted ${ledgerCount} and ${rowCount}`);
    db.exec('COMMIT');
    const { bytes, sha256 } = await messageBytes(texts);
    return { bytes, sha256, seq: last.seq, revision: last.revision, rows };
  } finally {
    db.close();
  }
}
