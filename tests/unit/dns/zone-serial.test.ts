import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../runtime/store/db.js';
import { ResourceStore } from '../../../core/store/resources.js';
import { EventBus } from '../../../core/events/bus.js';
import { SnapshotHolder, applyPlan } from '../../../core/apply/apply.js';
import { ApplyHooks } from '../../../core/apply/hooks.js';
import { planCreate } from '../../../core/plan/delta.js';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';
import type { PoolRow, Row, ServiceRow } from '../../../core/model/types.js';
import { ZoneSerial, nextSerial, serialGreater } from '../../../runtime/dns/zone-serial.js';
import { sql as serialMigration } from '../../../runtime/store/migrations/0013-dns-serial.js';

test('RFC 1982 arithmetic: +1 wraps past 2^32-1 (skipping 0), comparison across the wrap', () => {
  const next: [number, number][] = [[1, 2], [41, 42], [2 ** 31 - 1, 2 ** 31], [2 ** 32 - 2, 2 ** 32 - 1], [2 ** 32 - 1, 1]];
  for (const [given, want] of next) assert.equal(nextSerial(given), want, `next(${given})`);
  const greater: { a: number; b: number; want: boolean }[] = [
    { a: 2, b: 1, want: true },
    { a: 1, b: 2, want: false },
    { a: 5, b: 5, want: false },
    { a: 1, b: 2 ** 32 - 1, want: true }, // after the wrap
    { a: 2 ** 32 - 1, b: 1, want: false },
    { a: 2 ** 31 + 4, b: 5, want: true }, // 2^31 - 1 apart: still greater
    { a: 2 ** 31 + 4, b: 4, want: false }, // exactly 2^31 apart: undefined, so not greater
    { a: 4, b: 2 ** 31 + 4, want: false },
    { a: 2 ** 31 + 4, b: 3, want: false }, // more than 2^31 apart: greater the other way round
    { a: 3, b: 2 ** 31 + 4, want: true },
  ];
  for (const r of greater) assert.equal(serialGreater(r.a, r.b), r.want, `${r.a} > ${r.b}`);
  assert.ok(serialGreater(nextSerial(2 ** 32 - 1), 2 ** 32 - 1), 'the wrapped serial is greater than the last one');
});

const meta = { origin: 'api' as const, revision: 'r', tenantId: 'default' };
const pool = (id: string): PoolRow => ({ kind: 'pool', id, name: id, ...meta });
const service = (id: string): ServiceRow => ({ kind: 'service', id, name: id, domain: `${id}.example.test.`, algorithm: 'round-robin', ttl: 60, poolId: null, chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta });

test('the serial advances in the apply transaction of a DNS change only, survives a reopen, and a rollback leaves it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-serial-'));
  try {
    const path = join(dir, 'g.db');
    let db = openDatabase(path);
    const holder = new SnapshotHolder(emptySnapshot());
    const hooks = new ApplyHooks();
    let serial = new ZoneSerial(db);
    assert.equal(serial.current, 1, 'a new database starts at 1');
    hooks.add(serial.hook());
    let store = new ResourceStore(db);
    const apply = (row: Row) => applyPlan({ store, holder, bus: new EventBus(), hooks }, planCreate(holder.current, row, `api:${row.id}`));
    const rows: { name: string; row: Row; want: number }[] = [
      { name: 'a service', row: service('s1'), want: 2 },
      { name: 'another, in the same millisecond', row: service('s2'), want: 3 },
      { name: 'a pool (no DNS table)', row: pool('p1'), want: 3 },
      { name: 'a user (no DNS table)', row: { kind: 'user', id: 'u1', email: 'a@example.test', ...meta }, want: 3 },
    ];
    for (const r of rows) { apply(r.row); assert.equal(serial.current, r.want, r.name); }
    // a hook after it fails: the whole apply rolls back, the serial too
    const off = hooks.add({ inTransaction: () => { throw new Error('disk full'); } });
    assert.throws(() => apply(service('s3')), /disk full/);
    off();
    assert.equal(serial.current, 3, 'unchanged in memory');
    assert.equal((db.prepare('SELECT serial FROM dns_zone_serial').get() as { serial: number }).serial, 3, 'unchanged on disk');
    apply(pool('p2'));
    assert.equal(serial.current, 3, 'a later non-DNS plan does not pick up the rolled-back value');
    db.close();
    db = openDatabase(path);
    store = new ResourceStore(db);
    serial = new ZoneSerial(db);
    assert.equal(serial.current, 3, 'kept across a restart');
    const hooks2 = new ApplyHooks();
    hooks2.add(serial.hook());
    applyPlan({ store, holder, bus: new EventBus(), hooks: hooks2 }, planCreate(holder.current, service('s4'), 'api:s4'));
    assert.equal(serial.current, 4, 'and goes on from there');
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('migration 0013: a database that already holds state starts at the current time (above the old build-time serials)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-serial-'));
  try {
    const db = openDatabase(join(dir, 'g.db'));
    // run the migration again over a database with a revision in it, as an upgrade does
    db.exec("DROP TABLE dns_zone_serial; INSERT INTO revisions (revision, origin, applied_at, creates, updates, deletes) VALUES ('r0', 'api', 0, 1, 0, 0)");
    const before = Math.floor(Date.now() / 1000);
    db.exec(serialMigration);
    const s = new ZoneSerial(db);
    assert.ok(s.current >= before && s.current <= Math.floor(Date.now() / 1000) + 1, `${s.current}`);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
