import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  needsSnapshot, parseSnapshotRecord, parseSnapshotSteps, purgePoint, snapshotDue, snapshotHead, snapshotObjectName, snapshotPlanSteps, snapshotSeqOfName,
  type SnapshotRecord,
} from '../../../runtime/cluster/config-snapshot.js';
import { planObjectRevision } from '../../../runtime/cluster/snapshot-writer.js';
import { planObjectName } from '../../../runtime/cluster/plan-ref.js';
import { runAtOnce } from '../../../core/apply/slicer.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import type { Row } from '../../../core/model/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../runtime/store/db.js';
import { readSnapshot } from '../../../runtime/cluster/snapshot-read.js';

const SHA = 'ab'.repeat(32);
const rec = (seq: number, purgedBelow: number): SnapshotRecord => ({
  seq, revision: `r${seq}`, node: 'a', at: 1, rows: 3, purgedBelow, ref: { bucket: 'SVC_CFG_PLANS', name: snapshotObjectName('c', seq, SHA), size: 10, sha256: SHA },
});

test('a node loads the snapshot when it joins empty or its next message was purged, never one at or below its position', () => {
  assert.equal(needsSnapshot(0, undefined), false, 'no snapshot: replay from the start');
  assert.equal(needsSnapshot(0, rec(500, 1)), true, 'joins empty');
  assert.equal(needsSnapshot(499, rec(500, 401)), false, 'a little behind: the tail is still there');
  assert.equal(needsSnapshot(399, rec(500, 401)), true, 'its next message (400) was purged');
  assert.equal(needsSnapshot(400, rec(500, 401)), false, 'its next message (401) is the first kept');
  assert.equal(needsSnapshot(500, rec(500, 501)), false, 'at the snapshot');
  assert.equal(needsSnapshot(600, rec(500, 501)), false, 'past it');
});

test('a snapshot is due every N sequences or after the interval with something new; the purge keeps `keep` sequences', () => {
  const p = { every: 1000, intervalMs: 60_000, keep: 100 };
  assert.equal(snapshotDue(p, 999, undefined, 0), false);
  assert.equal(snapshotDue(p, 1000, undefined, 0), true);
  assert.equal(snapshotDue(p, 1500, { seq: 1000, at: 0 }, 59_999), false);
  assert.equal(snapshotDue(p, 1500, { seq: 1000, at: 0 }, 60_000), true, 'interval passed, new plans');
  assert.equal(snapshotDue(p, 1000, { seq: 1000, at: 0 }, 600_000), false, 'nothing new');
  assert.equal(snapshotDue(p, 5, undefined, 59_999 + 1_000, 1_000), false, 'no snapshot yet: the interval counts from the writer\'s start');
  assert.equal(snapshotDue(p, 5, undefined, 60_000 + 1_000, 1_000), true);
  assert.equal(snapshotDue({ every: 0, intervalMs: 0, keep: 0 }, 10_000, undefined, 1e12), false, 'both triggers off');
  assert.equal(purgePoint(1000, 100), 901);
  assert.equal(purgePoint(1000, 0), 1001);
  assert.equal(purgePoint(50, 100), 1);
});

test('object names: snapshots and plan objects of a cluster are told apart', () => {
  const name = snapshotObjectName('c', 42, SHA);
  assert.equal(snapshotSeqOfName('c', name), 42);
  assert.equal(snapshotSeqOfName('other', name), undefined);
  assert.equal(planObjectRevision('c', name), undefined);
  const plan = planObjectName('c', 'api:1.2', SHA);
  assert.equal(snapshotSeqOfName('c', plan), undefined);
  assert.equal(planObjectRevision('c', plan), 'api:1.2');
  assert.equal(planObjectRevision('c', planObjectName('c', 'snapshot', SHA)), 'snapshot', 'a revision named "snapshot" is a plan object');
});

test('records: a malformed one is none', () => {
  assert.deepEqual(parseSnapshotRecord(JSON.parse(JSON.stringify(rec(7, 1)))), rec(7, 1));
  assert.equal(parseSnapshotRecord({ ...rec(7, 1), seq: 0 }), undefined);
  assert.equal(parseSnapshotRecord({ ...rec(7, 1), ref: { ...rec(7, 1).ref, sha256: 'x' } }), undefined);
  assert.equal(parseSnapshotRecord(null), undefined);
});

const pool = (id: string, name: string, origin = 'api'): Row => ({ kind: 'pool', id, name, origin, revision: 'r', tenantId: 'default' } as unknown as Row);

test('a snapshot reads back as written: header, ledger, rows with their stored text', () => {
  const rows = [pool('p1', 'one'), pool('p2', 'two')];
  const text = snapshotHead({ snapshot: 1, cluster: 'c', seq: 9, revision: 'r9', node: 'a', at: 1, ledger: 2, rows: 2 }, [[3, 'r3', 'a', 1], [9, 'r9', 'b', 1]])
    + rows.map((r) => `${JSON.stringify(r)}\n`).join('');
  const enc = (t: string) => new TextEncoder().encode(t);
  const s = runAtOnce(parseSnapshotSteps(enc(text)));
  assert.equal(s.header.seq, 9);
  assert.deepEqual(s.ledger, [[3, 'r3', 'a', 1], [9, 'r9', 'b', 1]]);
  assert.deepEqual(s.rows.map((r) => r.row), rows);
  assert.equal(s.rows[0]!.json, JSON.stringify(rows[0]));
  assert.throws(() => runAtOnce(parseSnapshotSteps(enc(text.split('\n').slice(0, 3).join('\n')))), /lines/);
  assert.throws(() => runAtOnce(parseSnapshotSteps(enc(`${text}{"kind":"pool","id":"p9"}\n`))), /more lines/);
  assert.throws(() => runAtOnce(parseSnapshotSteps(enc('{"x":1}\n'))), /header/);
  assert.deepEqual(runAtOnce(parseSnapshotSteps(enc(text.slice(0, -1)))).rows.length, 2, 'the last newline is optional');
});

test('the snapshot plan creates what is missing, updates what differs, deletes the rest only for a node that had a position, and leaves config rows', () => {
  const current = nextSnapshot(emptySnapshot(), [pool('p1', 'old'), pool('p2', 'same'), pool('gone', 'x'), pool('static', 's', 'config')].map((row) => ({ op: 'put' as const, row })), 'r', 0);
  const snap = [pool('p1', 'new'), pool('p2', 'same'), pool('p3', 'three')].map((row) => ({ row, json: JSON.stringify(row) }));
  const behind = runAtOnce(snapshotPlanSteps(current, snap, 'snapshot:9', true));
  assert.deepEqual(behind.plan.changes.map((c) => `${c.op} ${c.id}`), ['update p1', 'create p3', 'delete gone']);
  assert.deepEqual(behind.plan.changes[0]!.fields, [{ field: 'name', before: 'old', after: 'new' }]);
  assert.deepEqual(behind.rowJson, [snap[0]!.json, snap[2]!.json, undefined]);
  assert.deepEqual(behind.plan.counts, { create: 1, update: 1, delete: 1 });
  const empty = runAtOnce(snapshotPlanSteps(current, snap, 'snapshot:9', false));
  assert.deepEqual(empty.plan.changes.map((c) => `${c.op} ${c.id}`), ['update p1', 'create p3']);
});

test('the reader takes the rows and the ledger of one committed state, on its own connection, and skips while a canary revision bakes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-snap-'));
  try {
    const path = join(dir, 'gslbd.db');
    const db = openDatabase(path);
    const who = { cluster: 'c', node: 'a' };
    assert.deepEqual(await readSnapshot(path, who), { skip: 'nothing applied yet' });
    const rows = [pool('p1', 'one'), pool('p2', 'two')];
    const ins = db.prepare("INSERT INTO resources (kind, id, tenant_id, data, origin, revision, created_at, updated_at) VALUES ('pool', ?, 'default', ?, 'api', 'r', 0, 0)");
    for (const r of rows) ins.run(r.id, JSON.stringify(r));
    db.prepare("INSERT INTO cluster_applied (seq, revision, origin_node, changes, applied_at) VALUES (4, 'r4', 'b', 1, 0), (7, 'r7', 'a', 1, 0)").run();
    const r = await readSnapshot(path, who, 123);
    assert.ok(!('skip' in r));
    assert.equal(r.seq, 7);
    assert.equal(r.rows, 2);
    const back = runAtOnce(parseSnapshotSteps(r.bytes));
    assert.deepEqual(back.header, { snapshot: 1, cluster: 'c', seq: 7, revision: 'r7', node: 'a', at: 123, ledger: 2, rows: 2 });
    assert.deepEqual(back.ledger, [[4, 'r4', 'b', 1], [7, 'r7', 'a', 1]]);
    assert.deepEqual(back.rows.map((x) => x.json), rows.map((x) => JSON.stringify(x)));
    db.prepare("INSERT INTO cluster_canary (revision, seq, spec, origin_node, phase) VALUES ('c1', 8, '{}', 'a', 'baking')").run();
    assert.deepEqual(await readSnapshot(path, who), { skip: 'canary revision c1 is baking' });
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
