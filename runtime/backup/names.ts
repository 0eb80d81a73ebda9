import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** A backup file's name: `gslbd-<YYYYMMDDTHHMMSS>.db`, the time in UTC (gslb-config-auth.md §2). */
export const BACKUP_NAME = /^gslbd-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.db$/;

/** The backup file name for a moment (milliseconds since the epoch), to the second, in UTC. */
export function backupName(at: number): string {
  return `gslbd-${utcStamp(at)}.db`;
}

/** `YYYYMMDDTHHMMSS` in UTC: the stamp of backup names and of `.pre-restore-` files. */
export function utcStamp(at: number): string {
  return new Date(at).toISOString().replace(/[-:]/g, '').slice(0, 15);
}

/** The moment a backup name stands for (ms), or undefined for a name that is not a backup's. */
export function backupTime(name: string): number | undefined {
  const m = BACKUP_NAME.exec(name);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
}

/** The backup files of `dir`, oldest first (names sort by time). Other files are not listed. */
export function listBackups(dir: string): string[] {
  return readdirSync(dir).filter((n) => BACKUP_NAME.test(n)).sort();
}

/**
 * Deletes the oldest backups of `dir` until `keep` are left (`keep` 0 keeps all). Only files whose
 * name is a backup's are counted or deleted. Returns the deleted names, oldest first.
 */
export function rotateBackups(dir: string, keep: number): string[] {
  if (keep <= 0) return [];
  const all = listBackups(dir);
  const doomed = all.slice(0, Math.max(0, all.length - keep));
  for (const n of doomed) rmSync(join(dir, n), { force: true });
  return doomed;
}
