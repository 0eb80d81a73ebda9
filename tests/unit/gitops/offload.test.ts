import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../../runtime/store/db.js';
import { ResourceStore, rowsSeqOf } from '../../../core/store/resources.js';
import { EventBus } from '../../../core/events/bus.js';
import { SnapshotHolder, applyPlan } from '../../../core/apply/apply.js';
import { planChanges } from '../../../core/plan/plan.js';
import { planId } from '../../../core/plan/plan-id.js';
import { planCreate } from '../../../core/plan/delta.js';
import { decodeChanges, encodeChanges } from '../../../gitops/offload/plan-wire.js';
import { DbState } from '../../../gitops/offload/db-state.js';
import { emptySnapshot, getRow, rowsOf, type Snapshot } from '../../../core/snapshot/snapshot.js';
import type { DesiredRow } from '../../../core/plan/types.js';
import type { Row } from '../../../core/model/types.js';

// gitops/offload/: how a plan crosses from the worker (plan-wire.ts) and how the worker knows
// which committed state it planned against (db-state.ts).

function desired(nPools: number, weight: number): DesiredRow[] {
  const out: DesiredRow[] = [];
  for (let p = 0; p < nPools; p++) {
    out.push({ kind: 'pool', key: `p${p}`, fields: { name: `p${p}` }, source: 'pools.yaml' });
    out.push({ kind: 'member', key: `p${p}/10.0.0.${p}:80`, fields: { ipAddress: `10.0.0.${p}`, port: 80, weight, priority: 0, enabled: true, rumUrl: null }, refs: [{ field: 'poolId', kind: 'pool', key: `p${p}` }], source: 'pools.yaml' });
  }
  return out;
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-offload-'));
  const path = join(dir, 'gslbd.db');
  const db = openDatabase(path);
  const store = new ResourceStore(db);
  const holder = new SnapshotHolder(emptySnapshot());
  const ctx = { store, holder, bus: new EventBus() };
  let n = 0;
  const newId = (kind: string) => `${kind}-${++n}`;
  // the worker's connection, as gitops/offload/worker-main.ts opens it
  const reader = new Database(path, { fileMustExist: true });
  const close = () => { reader.close(); db.close(); rmSync(dir, { recursive: true, force: true }); };
  return { db, holder, ctx, newId, reader, close };
}

const contents = (s: Snapshot) => [...s.rows].map(([k, m]) => [k, [...m.values()].map((r) => JSON.stringify(r))] as const);

test('plan wire: changes cross as JSON without `before`; the receiver puts its own rows back', () => {
  const { holder, ctx, newId, close } = setup();
  try {
    applyPlan(ctx, planChanges({ desired: desired(5, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' }));
    const plan = planChanges({ desired: desired(3, 2), actual: holder.current, revision: 'r2', newId, tenantId: 'default' });
    assert.deepEqual(plan.counts, { create: 0, update: 3, delete: 4 });
    const chunk = encodeChanges(plan.changes, 0, plan.changes.length);
    assert.ok((JSON.parse(chunk.changes) as object[]).every((c) => !('before' in c)), 'no before rows on the wire');
    const rowOf = (kind: string, id: string) => getRow(holder.current, kind, id);
    const back = decodeChanges(chunk, rowOf)!.changes;
    assert.deepEqual(back.map((c) => ({ ...c })), plan.changes.map((c) => ({ ...c })));
    assert.equal(back[0]!.before, getRow(holder.current, back[0]!.kind, back[0]!.id), 'the receiver’s own row object');
    assert.equal(planId({ ...plan, changes: back }), planId(plan), 'the same plan id');
    // chunks concatenate to the whole
    const parts = [encodeChanges(plan.changes, 0, 4), encodeChanges(plan.changes, 4, 100)].flatMap((j) => decodeChanges(j, rowOf)!.changes);
    assert.equal(parts.length, plan.changes.length);
    // a row the receiver does not have: its state is not the one the plan was made against
    assert.equal(decodeChanges(chunk, () => undefined), undefined);
    // rows and changes that do not pair up are refused
    assert.equal(decodeChanges({ ...chunk, ends: chunk.ends.slice(1) }, rowOf), undefined);
    assert.equal(decodeChanges({ ...chunk, rows: chunk.rows.slice(1) }, rowOf), undefined);
    assert.equal(decodeChanges({ ...chunk, ends: chunk.ends.map(() => 0), rows: '' }, rowOf), undefined);
  } finally {
    close();
  }
});

test('plan wire: each row crosses as its own JSON text, the text the receiver would store for the row it decodes', () => {
  const { holder, ctx, newId, close } = setup();
  try {
    applyPlan(ctx, planChanges({ desired: desired(5, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' }));
    const next = desired(3, 2);
    // a row with keys whose order JSON keeps (names that look like integers go first in JS objects)
    next.push({ kind: 'pool', key: 'odd', fields: { name: 'odd', description: 'ünïcödé "quoted" \u2028', '10': 1 } as Record<string, unknown>, source: 'pools.yaml' });
    const plan = planChanges({ desired: next, actual: holder.current, revision: 'r2', newId, tenantId: 'default' });
    const { changes, rowJson } = decodeChanges(encodeChanges(plan.changes, 0, plan.changes.length), (kind, id) => getRow(holder.current, kind, id))!;
    assert.equal(rowJson.length, changes.length);
    changes.forEach((c, i) => {
      if (c.op === 'delete') assert.equal(rowJson[i], undefined);
      else assert.equal(rowJson[i], JSON.stringify(c.after), `row ${i}: the same text as stringifying the decoded row`);
    });
    assert.ok(changes.some((c) => c.op === 'create') && changes.some((c) => c.op === 'update') && changes.some((c) => c.op === 'delete'));
    // decoded changes keep the key order of the changes the wire carried before rows went apart
    const upd = changes.find((c) => c.op === 'update')!;
    assert.deepEqual(Object.keys(upd), ['op', 'kind', 'id', 'label', 'after', 'fields', 'before']);
  } finally {
    close();
  }
});

test('db state: the rows and the state they are, read together; kept while the state stands', () => {
  const { holder, ctx, newId, reader, close, db } = setup();
  try {
    const state = new DbState(reader);
    let v = state.read();
    assert.equal(v.seq, 0);
    assert.equal(rowsOf(v.snapshot, 'pool').size, 0);
    applyPlan(ctx, planChanges({ desired: desired(4, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' }));
    v = state.read();
    assert.equal(v.seq, holder.rowsSeq);
    assert.equal(v.seq, rowsSeqOf(db));
    assert.deepEqual(contents(v.snapshot), contents(holder.current));
    assert.equal(state.read(), v, 'nothing moved: the same view');
    // an empty recorded revision (a commit that changes nothing) does not move the state
    applyPlan(ctx, planChanges({ desired: desired(4, 1), actual: holder.current, revision: 'r1b', newId, tenantId: 'default' }), { recordEmpty: true });
    assert.equal(state.read(), v);
    assert.equal(state.reads, 2);
  } finally {
    close();
  }
});

test('db state: its own plan, once applied, is laid over the view; any other write reads the rows again', () => {
  const { holder, ctx, newId, reader, close } = setup();
  try {
    const state = new DbState(reader);
    applyPlan(ctx, planChanges({ desired: desired(4, 1), actual: holder.current, revision: 'r1', newId, tenantId: 'default' }));
    let v = state.read();
    const reads = state.reads;
    // the worker plans against its view; the main thread applies that very plan (same plan id)
    const plan = planChanges({ desired: desired(6, 2), actual: v.snapshot, revision: 'r2', newId, tenantId: 'default' });
    plan.id = planId(plan);
    state.expect(v.seq, plan);
    applyPlan(ctx, { ...plan, baseVersion: holder.current.version }, { force: true });
    v = state.read();
    assert.equal(state.reads, reads, 'not read again');
    assert.equal(v.seq, holder.rowsSeq);
    assert.deepEqual(contents(v.snapshot), contents(holder.current));
    // a REST write is not the worker's plan: the rows are read again
    const plan2 = planChanges({ desired: desired(6, 3), actual: v.snapshot, revision: 'r3', newId, tenantId: 'default' });
    plan2.id = planId(plan2);
    state.expect(v.seq, plan2);
    applyPlan(ctx, planCreate(holder.current, { kind: 'pool', id: 'rest', name: 'rest', tenantId: 'default' } as Row, 'api:1'));
    v = state.read();
    assert.equal(state.reads, reads + 1);
    assert.equal(v.seq, holder.rowsSeq);
    assert.deepEqual(contents(v.snapshot), contents(holder.current));
  } finally {
    close();
  }
});
