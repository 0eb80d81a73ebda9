import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { openDatabase } from '../../../runtime/store/db.js';
import { Backups } from '../../../runtime/backup/backup.js';
import { restoreDatabase } from '../../../runtime/backup/restore.js';
import { MIGRATIONS } from '../../../runtime/store/migrations/index.js';
import { GslbError } from '../../../runtime/errors.js';

const require = createRequire(import.meta.url);
const NOW = Date.UTC(2026, 4, 1, 10, 15, 0);
const tmp = () => mkdtempSync(join(tmpdir(), 'gslbd-restore-unit-'));
const count = (path: string) => {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try { return (db.prepare('SELECT count(*) AS n FROM resources').get() as { n: number }).n; } finally { db.close(); }
};
const addRows = (db: Database.Database, n: number, tag: string) => {
  const ins = db.prepare("INSERT INTO resources (kind, id, tenant_id, data, origin, revision, created_at, updated_at) VALUES ('pool', ?, 'default', '{}', 'api', 'r1', 0, 0)");
  for (let i = 0; i < n; i++) ins.run(`${tag}-${i}`);
};

/** A backup of a fresh gslbd database holding `rows` pools. */
async function backupWith(dir: string, rows: number): Promise<string> {
  const db = openDatabase(join(dir, 'source.db'));
  try {
    addRows(db, rows, 'src');
    const r = await new Backups({ db, dir: join(dir, 'backups'), keep: 0 }).take();
    return join(r.dir, r.file);
  } finally { db.close(); }
}

const refused = (re: RegExp) => (err: GslbError) => err.code === 'STORE_RESTORE_REFUSED' && re.test(err.message);

test('restore into an empty place, then over a database: the old one kept aside with its WAL folded in, its -wal/-shm removed', async () => {
  const dir = tmp();
  try {
    const backup = await backupWith(dir, 3);
    const target = join(dir, 'node', 'gslbd.db');
    // the folder must exist (as for the daemon)
    assert.throws(() => restoreDatabase(backup, target, NOW), (err: GslbError) => err.code === 'STORE_OPEN_FAILED' && /does not exist/.test(err.message));
    const nodeDir = join(dir, 'node');
    mkdirSync(nodeDir);
    const first = restoreDatabase(backup, target, NOW);
    assert.deepEqual(first, { database: target, from: backup, version: MIGRATIONS.at(-1)!.version, previous: null, removed: [] });
    assert.equal(count(target), 3);
    assert.equal(statSync(target).mode & 0o777, 0o600);

    // a node killed mid-run: rows only in its WAL, a -shm beside it (SIGKILL: nothing closes the database)
    const killed = spawnSync(process.execPath, ['-e', `
      const D = require(${JSON.stringify(require.resolve('better-sqlite3'))});
      const db = new D(${JSON.stringify(target)}); db.pragma('journal_mode = WAL');
      const ins = db.prepare("INSERT INTO resources (kind, id, tenant_id, data, origin, revision, created_at, updated_at) VALUES ('pool', ?, 'default', '{}', 'api', 'r1', 0, 0)");
      for (let i = 0; i < 5; i++) ins.run('wal-' + i);
      process.kill(process.pid, 'SIGKILL');`]);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr.toString());
    assert.ok(statSync(`${target}-wal`).size > 0 && existsSync(`${target}-shm`));

    const second = restoreDatabase(backup, target, NOW);
    assert.equal(second.previous, `${target}.pre-restore-20260501T101500`);
    assert.equal(count(target), 3, 'the backup, not the WAL of the old database');
    assert.equal(count(second.previous!), 8, 'the old database kept aside is complete');
    for (const s of ['-wal', '-shm', '-journal']) assert.ok(!existsSync(`${target}${s}`), s);
    assert.deepEqual(readdirSync(nodeDir).filter((n) => n.includes('.tmp')), [], 'no temporary copy left');
    // a second restore in the same second keeps both old databases
    assert.equal(restoreDatabase(backup, target, NOW).previous, `${target}.pre-restore-20260501T101500.1`);
    const db = openDatabase(target); // the daemon opens it as usual
    db.close();
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('refused while the database is open (a running daemon), and nothing changes', async () => {
  const dir = tmp();
  try {
    const backup = await backupWith(dir, 1);
    const target = join(dir, 'gslbd.db');
    const running = openDatabase(target);
    try {
      addRows(running, 2, 'live');
      assert.throws(() => restoreDatabase(backup, target, NOW), refused(/gslbd\.db is in use: a running gslbd .* stop the daemon first/));
      assert.equal((running.prepare('SELECT count(*) AS n FROM resources').get() as { n: number }).n, 2);
      assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('gslbd.db')).sort(), ['gslbd.db', 'gslbd.db-shm', 'gslbd.db-wal']);
    } finally { running.close(); }
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('refused backups: one row per reason, the current database untouched', async () => {
  const dir = tmp();
  try {
    const good = await backupWith(dir, 1);
    const target = join(dir, 'gslbd.db');
    openDatabase(target).close();
    const before = readFileSync(target);
    const file = (name: string, make: (p: string) => void) => { const p = join(dir, name); make(p); return p; };
    const rows: { name: string; from: string; want: RegExp }[] = [
      { name: 'missing', from: join(dir, 'nope.db'), want: /cannot read .*nope\.db: ENOENT/ },
      { name: 'a folder', from: dir, want: /is not a file/ },
      { name: 'garbage', from: file('garbage.db', (p) => writeFileSync(p, 'this is not a database at all, just text '.repeat(200))), want: /garbage\.db is not a readable SQLite database: file is not a database/ },
      { name: 'truncated', from: file('truncated.db', (p) => { writeFileSync(p, readFileSync(good)); truncateSync(p, 4096 + 100); }), want: /truncated\.db (fails PRAGMA integrity_check|is not a readable SQLite database)/ },
      { name: 'not gslbd', from: file('other.db', (p) => { const d = new Database(p); d.exec('CREATE TABLE t (x)'); d.close(); }), want: /other\.db is not a gslbd database/ },
      { name: 'newer schema', from: file('newer.db', (p) => { writeFileSync(p, readFileSync(good)); const d = new Database(p); d.pragma('user_version = 9999'); d.close(); }), want: /newer\.db was written by a newer gslbd \(schema version 9999; this gslbd knows up to \d+\)/ },
    ];
    for (const r of rows) {
      assert.throws(() => restoreDatabase(r.from, target, NOW), refused(r.want), r.name);
      assert.deepEqual(readFileSync(target), before, `${r.name}: the database is unchanged`);
      assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('gslbd.db') || n.startsWith('.gslbd.db')), ['gslbd.db'], `${r.name}: nothing set aside or left over`);
    }
    assert.throws(() => restoreDatabase(good, ':memory:', NOW), refused(/database\.path is :memory:/));
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

