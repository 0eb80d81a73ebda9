import { accessSync, constants } from 'node:fs';
import type { Core } from '../app.js';
import { PARTS } from '../parts.js';
import { GslbError } from '../errors.js';
import { parseDuration } from '../config/duration.js';
import { Backups, type BackupResult } from './backup.js';
import { createBackupMetrics } from './metrics.js';
import { backupTime, listBackups } from './names.js';
import { backupRoutes } from './routes.js';
import { scheduleBackups } from './schedule.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** takes a backup now (what POST /system/backup does): logged and counted like a scheduled one */
    takeBackup?: () => Promise<BackupResult>;
  }
}

const services = new WeakMap<Core, { backups: Backups; take: (trigger: 'schedule' | 'api') => Promise<BackupResult> }>();

/**
 * Database backups (docs/backup.md): `POST /system/backup` always, and with `backup.enabled` one
 * every `backup.interval` into `backup.dir`, keeping `backup.keep`. With backups on, a folder that
 * cannot be created or written stops startup; later failures are logged (`backup failed`) and
 * counted (`gslbd_backups_total{result="failed"}`), and the daemon carries on.
 */
PARTS.push({
  name: 'backup',
  setup(core, ext) {
    const { dir, keep, enabled } = core.config.backup;
    const log = core.log.child({ component: 'backup' });
    const backups = new Backups({ db: core.db, dir, keep, gate: core.applyGate });
    const metrics = createBackupMetrics(core.metrics);
    const take = async (trigger: 'schedule' | 'api') => {
      try {
        const r = await backups.take();
        metrics.taken(r);
        log.info({ file: r.file, dir, size: r.size, durationMs: r.durationMs, rotated: r.rotated, trigger }, 'backup taken');
        return r;
      } catch (err) {
        metrics.failed();
        log.error({ err, dir, trigger }, 'backup failed');
        throw err;
      }
    };
    services.set(core, { backups, take });
    core.ports.takeBackup = () => take('api');
    ext.apiPlugins.push(async (app) => { await app.register(backupRoutes(() => take('api'))); });
    if (!enabled) return;
    backups.ensureDir();
    try {
      accessSync(dir, constants.W_OK);
    } catch {
      throw new GslbError('CONFIG_INVALID', `backup.dir ${dir} is not writable by this user; fix its permissions or choose another folder`);
    }
    const stale = backups.removeStaleTemps();
    if (stale.length) log.warn({ dir, files: stale }, 'removed unfinished backup files');
  },
  start(core) {
    const s = services.get(core);
    if (!s) return;
    const { enabled, interval, dir, keep } = core.config.backup;
    let stop = () => {};
    if (enabled) {
      const newest = listBackups(dir).at(-1);
      stop = scheduleBackups({
        intervalMs: parseDuration(interval)!,
        newest: newest === undefined ? undefined : backupTime(newest),
        run: () => s.take('schedule').then(() => undefined, () => undefined),
      });
      core.log.child({ component: 'backup' }).info({ dir, interval, keep }, 'backups scheduled');
    }
    return async () => {
      stop();
      await s.backups.idle();
    };
  },
});
