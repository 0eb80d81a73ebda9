import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../store/db.js';
import { GslbError } from '../errors.js';
import { backupName, rotateBackups } from './names.js';
import type { WriteGate } from '../../core/apply/gate.js';

/** One backup file written: its name in `dir`, size in bytes, and when it was taken. */
export interface BackupResult {
  file: string;
  dir: string;
  size: number;
  /** the moment in the name, ms since the epoch */
  createdAt: number;
  durationMs: number;
  /** older backups deleted by the rotation that followed */
  rotated: string[];
}

export interface BackupOptions {
  db: Db;
  dir: string;
  /** how many backups to keep (0 keeps all) */
  keep: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * the core's write gate: held while a copy runs, so a large apply (which keeps a transaction open
   * on this connection across turns, docs/architecture.md "Large applies") is never copied half
   * written; a copy waits for one under way, and one waits for the copy
   */
  gate?: WriteGate;
}

// the temporary name a backup is written under before its rename; never a backup name
const TEMP = /^\.gslbd-\d{8}T\d{6}\.db\.tmp$/;

/**
 * Takes backups of the live database with SQLite's online backup API (better-sqlite3
 * `db.backup`, which copies 100 pages per event-loop turn, so queries and requests keep being
 * served), one at a time. Each file is written under a temporary name, switched to a
 * self-contained rollback-journal file (no `-wal` needed to open it), made private (0600:
 * it holds password hashes and sealed secrets), then renamed to `gslbd-<UTC>.db`, so a
 * `gslbd-*.db` file is always complete. Writes made through the daemon's connection while a copy
 * runs are carried into it by SQLite, so the file is one consistent state.
 */
export class Backups {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly opts: BackupOptions) {
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  get dir(): string { return this.opts.dir; }

  /** Creates the backup folder (0700) when absent. Errors: STORE_FAILED naming the folder. */
  ensureDir(): void {
    try {
      mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new GslbError('STORE_FAILED', `cannot create backup.dir ${this.opts.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
    }
  }

  /** Deletes temporary files a backup interrupted by a crash left behind. Returns their names. */
  removeStaleTemps(): string[] {
    let names: string[];
    try { names = readdirSync(this.opts.dir).filter((n) => TEMP.test(n)); } catch { return []; }
    for (const n of names) rmSync(join(this.opts.dir, n), { force: true });
    return names;
  }

  /**
   * Takes one backup, after any backup already running. Names are to the second: when the
   * second's name is taken (two backups in one second), it waits for the next second instead of
   * skipping, so every call gets a file of its own. Then deletes the oldest backups beyond `keep`.
   * Errors: STORE_FAILED (folder, disk, SQLite), with no temporary file left behind.
   */
  take(): Promise<BackupResult> {
    const run = this.chain.then(() => this.takeNow(), () => this.takeNow());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Resolves when the backups queued so far have finished (shutdown waits on it). */
  idle(): Promise<void> {
    return this.chain.then(() => undefined);
  }

  private async takeNow(): Promise<BackupResult> {
    const { dir, db, keep } = this.opts;
    const started = this.now();
    this.ensureDir();
    let at = this.now();
    if (existsSync(join(dir, backupName(at)))) {
      await this.sleep(1000 - (at % 1000) + 5);
      at = this.now();
      if (existsSync(join(dir, backupName(at)))) throw new GslbError('STORE_FAILED', `backup ${backupName(at)} exists already in ${dir} (is the clock going backwards?)`);
    }
    const file = backupName(at);
    const tmp = join(dir, `.${file}.tmp`);
    const hold = await this.opts.gate?.acquire();
    try {
      try {
        await db.backup(tmp);
      } finally {
        hold?.release();
      }
      selfContained(tmp);
      chmodSync(tmp, 0o600);
      renameSync(tmp, join(dir, file));
      syncDir(dir);
    } catch (err) {
      rmSync(tmp, { force: true });
      rmSync(`${tmp}-journal`, { force: true });
      throw err instanceof GslbError ? err : new GslbError('STORE_FAILED', `backup to ${dir} failed: ${(err as Error).message}`, { cause: err });
    }
    const size = statSync(join(dir, file)).size;
    const rotated = rotateBackups(dir, keep);
    return { file, dir, size, createdAt: Math.floor(at / 1000) * 1000, durationMs: this.now() - started, rotated };
  }
}

/**
 * The online backup copies the source's header, WAL flag included; a WAL-flagged file needs a
 * writable folder for its `-shm` even to be read. Switching the copy to the rollback journal makes
 * it one plain file that opens anywhere, read-only too (the daemon switches WAL on again at open).
 */
function selfContained(path: string): void {
  const copy = new Database(path, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}

/** Makes a rename in `dir` durable (the rename itself lives in the folder). */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try { fsyncSync(fd); } finally { closeSync(fd); }
}
