import { DEFAULT_CONFIG_PATH, loadConfig } from '../runtime/config/load.js';
import { GslbError, ValidationError } from '../runtime/errors.js';
import { restoreDatabase } from '../runtime/backup/restore.js';
import { ApiClient } from './client.js';
import { COMMANDS, output } from './commands.js';
import { inputError } from './exit-codes.js';
import { when } from './format.js';

type Flags = Record<string, string | boolean>;
const str = (f: Flags, k: string) => (typeof f[k] === 'string' ? (f[k] as string) : undefined);

interface BackupFile { file: string; dir: string; size: number; createdAt: number }

/** `gslbctl backup`: the daemon takes a backup now (POST /api/v1/system/backup, docs/backup.md). */
COMMANDS.backup = {
  usage: 'backup [--server URL]',
  summary: 'take a database backup now, into the daemon\'s backup.dir (the system key or an operator-tenant tenant_admin)',
  values: ['server'],
  booleans: [],
  async run(flags, args) {
    if (args.length) throw inputError('backup takes no arguments');
    const b = await new ApiClient(str(flags, 'server')).call<BackupFile>('POST', '/system/backup');
    output(flags, b, () => `backup ${b.file} (${b.size} bytes) written to ${b.dir} at ${when(b.createdAt * 1000)}`);
    return 0;
  },
};

/**
 * `gslbctl restore FILE [--config FILE]`: offline restore into the `database.path` of the config
 * (runtime/backup/restore.ts). Exit 0 restored; 2 refused (the daemon is running, the file is not a
 * sound gslbd backup, its schema is newer, the config cannot be used), nothing changed then.
 */
COMMANDS.restore = {
  usage: 'restore FILE [--config FILE]',
  summary: 'restore a backup into the database of a stopped node (the previous database is kept as <path>.pre-restore-<UTC>)',
  values: ['config'],
  booleans: [],
  aliases: { c: 'config' },
  async run(flags, args) {
    if (args.length !== 1) throw inputError('usage: restore FILE [--config FILE]');
    const file = str(flags, 'config') ?? DEFAULT_CONFIG_PATH;
    let dbPath: string;
    try {
      dbPath = loadConfig(file).database.path;
    } catch (err) {
      throw inputError(`--config ${file}: ${err instanceof ValidationError ? err.problems.join('; ') : (err as Error).message}`);
    }
    let r;
    try {
      r = restoreDatabase(args[0]!, dbPath);
    } catch (err) {
      if (err instanceof GslbError) throw inputError(`refused, nothing changed: ${err.message}`);
      throw err;
    }
    output(flags, r, () => [
      `restored ${r.from} into ${r.database} (schema version ${r.version})`,
      r.previous ? `the previous database is kept as ${r.previous}` : 'there was no previous database',
      ...(r.removed.length ? [`removed the previous database's ${r.removed.join(', ')}`] : []),
      'start gslbd to serve the restored state',
    ].join('\n'));
    return 0;
  },
};
