import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../runtime/store/db.js';
import { Backups } from '../../../runtime/backup/backup.js';
import { BACKUP_NAME, backupName, backupTime, listBackups, rotateBackups } from '../../../runtime/backup/names.js';
import { scheduleBackups } from '../../../runtime/backup/schedule.js';
import { GslbError } from '../../../runtime/errors.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'gslbd-backup-unit-'));
const fill = (db: Db, from: number, n: number) => {
  const ins = db.prepare('INSERT INTO bulk (id, body) VALUES (?, ?)');
  db.transaction(() => { for (let i = from; i < from + n; i++) ins.run(i, 'x'.repeat(400)); })();
};
const openCopy = (path: string) => new Database(path, { readonly: true, fileMustExist: true });

test('names: gslbd-<YYYYMMDDTHHMMSS>.db in UTC, and back', () => {
  const rows = [
    { given: Date.UTC(2026, 4, 1, 10, 0, 5, 999), want: 'gslbd-20260501T100005.db' },
    { given: Date.UTC(1999, 11, 31, 23, 59, 59), want: 'gslbd-19991231T235959.db' },
  ];
  for (const r of rows) {
    assert.equal(backupName(r.given), r.want);
    assert.equal(backupTime(r.want), Math.floor(r.given / 1000) * 1000);
  }
  for (const n of ['gslbd-20260501T100005.db.bak', 'gslbd-manual.db', '.gslbd-20260501T100005.db.tmp', 'gslbd-20260501T1000.db', 'x-20260501T100005.db']) {
    assert.equal(BACKUP_NAME.test(n), false, n);
    assert.equal(backupTime(n), undefined, n);
  }
});

test('rotation deletes the oldest backups beyond keep and touches no other file; keep 0 keeps all', () => {
  const dir = tmp();
  try {
    const backups = ['gslbd-20260101T000000.db', 'gslbd-20260101T000001.db', 'gslbd-20251231T235959.db', 'gslbd-20260102T000000.db', 'gslbd-20260101T120000.db'];
    const others = ['gslbd-manual.db', 'notes.txt', 'gslbd-20200101T000000.db.bak', '.gslbd-20200101T000000.db.tmp'];
    for (const n of [...backups, ...others]) writeFileSync(join(dir, n), n);
    assert.deepEqual(rotateBackups(dir, 0), []);
    assert.deepEqual(rotateBackups(dir, 2), ['gslbd-20251231T235959.db', 'gslbd-20260101T000000.db', 'gslbd-20260101T000001.db']);
    assert.deepEqual(listBackups(dir), ['gslbd-20260101T120000.db', 'gslbd-20260102T000000.db']);
    for (const n of others) assert.ok(existsSync(join(dir, n)), n);
    assert.deepEqual(rotateBackups(dir, 2), []);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('a backup holds what is still in the WAL, opens on its own (no -wal), passes integrity_check, and is private', async () => {
  const dir = tmp();
  const db = openDatabase(join(dir, 'live.db'));
  try {
    db.exec('CREATE TABLE bulk (id INTEGER PRIMARY KEY, body TEXT)');
    fill(db, 0, 300);
    // the rows are in the WAL, not yet in the main file
    assert.ok(statSync(join(dir, 'live.db-wal')).size > 0);
    const out = join(dir, 'backups');
    const r = await new Backups({ db, dir: out, keep: 3 }).take();
    assert.match(r.file, BACKUP_NAME);
    assert.equal(r.size, statSync(join(out, r.file)).size);
    assert.deepEqual(readdirSync(out), [r.file], 'no temporary file is left');
    assert.equal(statSync(join(out, r.file)).mode & 0o777, 0o600);
    assert.equal(statSync(out).mode & 0o777, 0o700);
    const copy = openCopy(join(out, r.file));
    try {
      assert.equal((copy.prepare('SELECT count(*) AS n FROM bulk').get() as { n: number }).n, 300);
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(copy.pragma('journal_mode', { simple: true }), 'delete');
      assert.equal(copy.pragma('user_version', { simple: true }), db.pragma('user_version', { simple: true }));
    } finally { copy.close(); }
    assert.ok(!existsSync(join(out, `${r.file}-wal`)));
  } finally { db.close(); rmSync(dir, { recursive: true, force: true }); }
});

test('writes made while the copy runs end up in it: the file is one consistent state', async () => {
  const dir = tmp();
  const db = openDatabase(join(dir, 'live.db'));
  try {
    db.exec('CREATE TABLE bulk (id INTEGER PRIMARY KEY, body TEXT)');
    fill(db, 0, 6000); // about 700 pages: several steps of 100
    let n = 6000;
    let writes = 0;
    let done = false;
    const writer = () => { if (done) return; fill(db, n, 10); n += 10; writes++; setImmediate(writer); };
    setImmediate(writer);
    const r = await new Backups({ db, dir, keep: 0 }).take();
    done = true;
    assert.ok(writes > 0, 'the writer ran while the backup was copying');
    const copy = openCopy(join(dir, r.file));
    try {
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
      const got = (copy.prepare('SELECT count(*) AS n, max(id) AS top FROM bulk').get() as { n: number; top: number });
      assert.equal(got.n, got.top + 1, 'no gap: whole transactions only');
      assert.ok(got.n >= 6000);
    } finally { copy.close(); }
  } finally { db.close(); rmSync(dir, { recursive: true, force: true }); }
});

test('two backups in one second: the second waits for the next second; a name still taken after that is an error', async () => {
  const dir = tmp();
  const db = openDatabase(':memory:'); // an in-memory store can be backed up too
  try {
    let t = Date.UTC(2026, 4, 1, 10, 0, 5, 400);
    const slept: number[] = [];
    const b = new Backups({ db, dir, keep: 0, now: () => t, sleep: async (ms) => { slept.push(ms); t += ms; } });
    const [a, c] = await Promise.all([b.take(), b.take()]);
    assert.equal(a.file, 'gslbd-20260501T100005.db');
    assert.equal(c.file, 'gslbd-20260501T100006.db');
    assert.deepEqual(slept, [605]);
    // a clock that does not move on (or went back): refused, no file overwritten
    const stuck = new Backups({ db, dir, keep: 0, now: () => Date.UTC(2026, 4, 1, 10, 0, 6), sleep: async () => {} });
    await assert.rejects(stuck.take(), (err: GslbError) => err.code === 'STORE_FAILED' && /gslbd-20260501T100006\.db exists already/.test(err.message));
    assert.deepEqual(listBackups(dir), ['gslbd-20260501T100005.db', 'gslbd-20260501T100006.db']);
  } finally { db.close(); rmSync(dir, { recursive: true, force: true }); }
});

test('a folder that cannot be made fails the backup with STORE_FAILED naming it; the next backup works again', async () => {
  const dir = tmp();
  const db = openDatabase(':memory:');
  try {
    writeFileSync(join(dir, 'file'), 'not a folder');
    const bad = new Backups({ db, dir: join(dir, 'file', 'backups'), keep: 1 });
    await assert.rejects(bad.take(), (err: GslbError) => err.code === 'STORE_FAILED' && err.message.includes(join(dir, 'file', 'backups')));
    // the queue is not poisoned by a failure
    rmSync(join(dir, 'file'));
    mkdirSync(join(dir, 'file'));
    assert.match((await bad.take()).file, BACKUP_NAME);
  } finally { db.close(); rmSync(dir, { recursive: true, force: true }); }
});

test('removeStaleTemps deletes only unfinished backup files', () => {
  const dir = tmp();
  try {
    for (const n of ['.gslbd-20260501T100005.db.tmp', 'gslbd-20260501T100005.db', 'other.tmp']) writeFileSync(join(dir, n), '');
    const b = new Backups({ db: undefined as never, dir, keep: 0 });
    assert.deepEqual(b.removeStaleTemps(), ['.gslbd-20260501T100005.db.tmp']);
    assert.deepEqual(readdirSync(dir).sort(), ['gslbd-20260501T100005.db', 'other.tmp']);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('schedule: due one interval after the newest backup; at once when there is none or it is older', async () => {
  const rows = [
    { name: 'no backup yet: at once', newestAgo: undefined, want: (n: number) => n >= 1 },
    { name: 'newest older than the interval: at once', newestAgo: 5000, want: (n: number) => n >= 1 },
    { name: 'newest 20 ms old, interval 1 s: not within 150 ms', newestAgo: 20, want: (n: number) => n === 0 },
  ];
  for (const r of rows) {
    let runs = 0;
    const stop = scheduleBackups({ intervalMs: 1000, newest: r.newestAgo === undefined ? undefined : Date.now() - r.newestAgo, run: async () => { runs++; } });
    await new Promise((res) => setTimeout(res, 150));
    stop();
    assert.ok(r.want(runs), `${r.name}: ${runs} runs`);
  }
  // repeats every interval, one at a time, and stops
  let runs = 0;
  let inFlight = 0;
  let overlap = false;
  const stop = scheduleBackups({ intervalMs: 40, newest: undefined, run: async () => { runs++; inFlight++; overlap ||= inFlight > 1; await new Promise((res) => setTimeout(res, 5)); inFlight--; } });
  await new Promise((res) => setTimeout(res, 300));
  stop();
  const at = runs;
  await new Promise((res) => setTimeout(res, 100));
  assert.ok(at >= 3 && at <= 9, `${at} runs in 300 ms`);
  assert.equal(runs, at, 'no run after stop');
  assert.equal(overlap, false);
});
