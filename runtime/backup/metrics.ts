import { Counter, Gauge, type Registry } from 'prom-client';
import type { BackupResult } from './backup.js';

/** The backup metrics: results by outcome, and the newest good backup's time and size. */
export interface BackupMetrics {
  taken: (r: BackupResult) => void;
  failed: () => void;
}

/**
 * Registers `gslbd_backups_total{result="ok"|"failed"}`, `gslbd_backup_last_success_timestamp_seconds`
 * and `gslbd_backup_last_size_bytes` (an alert on the timestamp's age catches a schedule that
 * stopped working).
 */
export function createBackupMetrics(registry: Registry): BackupMetrics {
  const total = new Counter({ name: 'gslbd_backups_total', help: 'Database backups attempted, by result', labelNames: ['result'], registers: [registry] });
  const last = new Gauge({ name: 'gslbd_backup_last_success_timestamp_seconds', help: 'When the newest successful backup was taken (Unix seconds)', registers: [registry] });
  const size = new Gauge({ name: 'gslbd_backup_last_size_bytes', help: 'Size of the newest successful backup file', registers: [registry] });
  total.inc({ result: 'ok' }, 0);
  total.inc({ result: 'failed' }, 0);
  return {
    taken(r) { total.inc({ result: 'ok' }); last.set(r.createdAt / 1000); size.set(r.size); },
    failed() { total.inc({ result: 'failed' }); },
  };
}
