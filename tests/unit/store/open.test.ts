import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, chmodSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../runtime/store/db.js';
import { MIGRATIONS } from '../../../runtime/store/migrations/index.js';

test('opening a database runs every migration once and uses WAL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-db-'));
  try {
    const file = join(dir, 'a.db');
    const db = openDatabase(file);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.at(-1)!.version);
    db.close();
    const again = openDatabase(file);
    assert.equal(again.pragma('user_version', { simple: true }), MIGRATIONS.at(-1)!.version);
    again.close();
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('a missing, non-directory or unwritable parent gives a clear error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-db-'));
  try {
    assert.throws(() => openDatabase(join(dir, 'missing', 'x.db')), /parent directory .*missing does not exist/);
    writeFileSync(join(dir, 'file'), '');
    assert.throws(() => openDatabase(join(dir, 'file', 'x.db')), /is not a directory/);
    // root may write anywhere chmod allows, so as root use a directory the kernel keeps read-only
    let ro = '/proc/sys';
    if (process.getuid?.() !== 0) {
      ro = join(dir, 'ro');
      mkdirSync(ro);
      chmodSync(ro, 0o500);
    }
    assert.throws(() => openDatabase(join(ro, 'x.db')), /not writable/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test(':memory: is allowed', () => {
  const db = openDatabase(':memory:');
  assert.ok(db.open);
  db.close();
});
