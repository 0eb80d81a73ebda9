import Database from 'better-sqlite3';
import { chmodSync, chownSync, copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { GslbError } from '../errors.js';
import { checkParentDir } from '../store/db.js';
import { MIGRATIONS } from '../store/migrations/index.js';
import { utcStamp } from './names.js';

/** What a restore did: the database written, the schema version it holds, where the old one went. */
export interface RestoreResult {
  database: string;
  from: string;
  /** the backup's schema version (`PRAGMA user_version`); the daemon migrates an older one at start */
  version: number;
  /** the previous database, kept as `<database>.pre-restore-<UTC>`; null when there was none */
  previous: string | null;
  /** the previous database's `-wal`, `-shm`, `-journal` files, removed so they cannot be replayed into the new one */
  removed: string[];
}

const SIDECARS = ['-wal', '-shm', '-journal'];
const refused = (message: string, cause?: unknown) => new GslbError('STORE_RESTORE_REFUSED', message, cause === undefined ? undefined : { cause });
const sqliteCode = (err: unknown) => (err as { code?: unknown }).code;

/**
 * Restores a backup into `dbPath` of a stopped node (`gslbctl restore`, docs/backup.md):
 * 1. refuses when the current database is open in any process: gslbd keeps it open while it runs,
 *    and an open WAL database cannot be locked exclusively (SQLite's own locks, so a crashed
 *    daemon leaves nothing stale behind);
 * 2. copies the backup next to the database and checks the copy: it opens, `PRAGMA
 *    integrity_check` says ok, it is a gslbd database, its schema is not newer than this binary's;
 * 3. keeps the previous database as `<dbPath>.pre-restore-<UTC>` (its WAL folded in first),
 *    removes the old `-wal`/`-shm`/`-journal`, renames the copy into place with the old file's
 *    owner and mode.
 * Nothing is changed unless every check passes. Errors: STORE_RESTORE_REFUSED (or
 * STORE_OPEN_FAILED for the database's folder) with a message naming the file and the problem.
 */
export function restoreDatabase(from: string, dbPath: string, now = Date.now()): RestoreResult {
  if (dbPath === ':memory:') throw refused('database.path is :memory:: there is no database file to restore into; set database.path to a file');
  checkParentDir(dbPath);
  let st;
  try { st = statSync(from); } catch (err) { throw refused(`cannot read ${from}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err); }
  if (!st.isFile()) throw refused(`${from} is not a file`);
  const had = existsSync(dbPath) ? statSync(dbPath) : undefined;
  if (had) quiesce(dbPath);
  const stamp = utcStamp(now);
  const tmp = join(dirname(dbPath), `.${basename(dbPath)}.restore-${stamp}.tmp`);
  let version: number;
  try {
    copyFileSync(from, tmp);
    version = checkBackup(tmp, from);
  } catch (err) {
    removeWithSidecars(tmp);
    throw err;
  }
  let previous: string | null = null;
  if (had) {
    previous = freeName(`${dbPath}.pre-restore-${stamp}`);
    renameSync(dbPath, previous);
  }
  const removed = SIDECARS.map((s) => `${dbPath}${s}`).filter((f) => existsSync(f));
  for (const f of removed) rmSync(f, { force: true });
  chmodSync(tmp, had ? had.mode & 0o777 : 0o600);
  // the daemon's user must be able to write it when root restores (`sudo gslbctl restore`)
  if (had && process.getuid?.() === 0 && (had.uid !== 0 || had.gid !== 0)) chownSync(tmp, had.uid, had.gid);
  renameSync(tmp, dbPath);
  return { database: dbPath, from, version, previous, removed };
}

/**
 * Refuses when another connection has the database open; otherwise closes it cleanly, which
 * checkpoints its WAL into the file, so the copy kept aside is complete on its own.
 */
function quiesce(dbPath: string): void {
  let db: Database.Database;
  try {
    db = new Database(dbPath, { fileMustExist: true, timeout: 0 });
  } catch (err) {
    throw refused(`cannot open the current database ${dbPath}: ${(err as Error).message}`, err);
  }
  try {
    // EXCLUSIVE locking mode: the lock is taken on the file itself, which any open WAL
    // connection (a running gslbd, even idle) prevents
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (err) {
    const code = sqliteCode(err);
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw refused(`${dbPath} is in use: a running gslbd (or another program) has it open; stop the daemon first`, err);
    }
    // a damaged current database is only set aside; nothing can be running on it
    if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CORRUPT') throw refused(`cannot lock the current database ${dbPath}: ${(err as Error).message}`, err);
  } finally {
    db.close();
  }
}

/** Checks the copy of a backup; returns its schema version. */
function checkBackup(copy: string, from: string): number {
  const latest = MIGRATIONS.at(-1)!.version;
  let db: Database.Database;
  try {
    db = new Database(copy, { fileMustExist: true, timeout: 0 });
  } catch (err) {
    throw refused(`${from} does not open as a SQLite database: ${(err as Error).message}`, err);
  }
  try {
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    if (rows.length !== 1 || rows[0]!.integrity_check !== 'ok') {
      throw refused(`${from} fails PRAGMA integrity_check: ${rows.slice(0, 3).map((r) => r.integrity_check).join('; ')}${rows.length > 3 ? ` (and ${rows.length - 3} more)` : ''}`);
    }
    const version = db.pragma('user_version', { simple: true }) as number;
    const resources = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'resources'").get();
    if (version === 0 || !resources) throw refused(`${from} is not a gslbd database (no schema version or no resources table)`);
    if (version > latest) throw refused(`${from} was written by a newer gslbd (schema version ${version}; this gslbd knows up to ${latest}): restore it with that version`);
    return version;
  } catch (err) {
    if (err instanceof GslbError) throw err;
    throw refused(`${from} is not a readable SQLite database: ${(err as Error).message}`, err);
  } finally {
    db.close();
  }
}

function removeWithSidecars(path: string): void {
  for (const s of ['', ...SIDECARS]) rmSync(`${path}${s}`, { force: true });
}

/** `base`, or `base.1`, `base.2`… when taken (two restores in one second). */
function freeName(base: string): string {
  let name = base;
  for (let i = 1; existsSync(name); i++) name = `${base}.${i}`;
  return name;
}
