import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../../runtime/store/db.js';
import { ResourceStore } from '../../../core/store/resources.js';
import { EventBus } from '../../../core/events/bus.js';
import { SnapshotHolder, applyPlan } from '../../../core/apply/apply.js';
import { NO_PROVENANCE, loadProvenance, makeProvenance, nextProvenance } from '../../../core/apply/provenance.js';
import { planChanges } from '../../../core/plan/plan.js';
import { planId } from '../../../core/plan/plan-id.js';
import type { DesiredRow, Plan } from '../../../core/plan/types.js';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';
import { txtValueOf } from '../../../runtime/txt/record.js';
import { changeJsonText, changeToJson, planToJson } from '../../../core/plan/render.js';
import { createHash } from 'node:crypto';

const SHA = 'a'.repeat(40);
const FPR = 'B'.repeat(40);
const pool = (name: string, weight = 1): DesiredRow[] => [
  { kind: 'pool', key: name, fields: { name } },
  { kind: 'member', key: `${name}/10.0.0.1:80`, fields: { ipAddress: '10.0.0.1', port: 80, weight, priority: 0, enabled: true, rumUrl: null }, refs: [{ field: 'poolId', kind: 'pool', key: name }] },
];
const plan = (desired: DesiredRow[], revision = SHA): Plan =>
  planChanges({ desired, actual: emptySnapshot(), revision, newId: (kind, key) => `new:${kind}/${key}`, tenantId: 'default' });

test('planId: 16 hex digits of what the plan does; the computing node and the verdict do not count', () => {
  const base = plan(pool('eu'));
  const rows: { name: string; given: Plan; same: boolean }[] = [
    { name: 'the same plan computed again', given: plan(pool('eu')), same: true },
    { name: 'another base snapshot version', given: { ...base, baseVersion: base.baseVersion + 7 }, same: true },
    { name: 'another safety verdict', given: { ...base, safety: { ...base.safety, safe: false, reason: 'TooManyDeletes' } }, same: true },
    { name: 'another revision', given: plan(pool('eu'), 'c'.repeat(40)), same: false },
    { name: 'another field value', given: plan(pool('eu', 2)), same: false },
    { name: 'another row', given: plan(pool('us')), same: false },
    { name: 'another origin', given: { ...base, origin: 'api' }, same: false },
    { name: 'fewer changes', given: { ...base, changes: base.changes.slice(1) }, same: false },
  ];
  const id = planId(base);
  assert.match(id, /^[0-9a-f]{16}$/);
  for (const r of rows) assert.equal(planId(r.given) === id, r.same, r.name);
});

test('planId is the SHA-256 of the stable JSON {revision, origin, changes}, fed one change at a time', () => {
  const db = openDatabase(':memory:');
  const holder = new SnapshotHolder(emptySnapshot());
  const ctx = { store: new ResourceStore(db), holder, bus: new EventBus() };
  applyPlan(ctx, plan([...pool('eu'), ...pool('us')]));
  // creates, updates and deletes (whose rendering lists the deleted row's fields)
  const mixed = planChanges({ desired: [...pool('eu', 5), ...pool('ap')], actual: holder.current, revision: SHA, newId: (kind, key) => `new:${kind}/${key}`, tenantId: 'default' });
  assert.deepEqual(mixed.counts, { create: 2, update: 1, delete: 2 });
  for (const p of [mixed, plan([]), plan(pool('eu'))]) {
    const j = planToJson(p);
    const whole = createHash('sha256').update(JSON.stringify({ revision: j.revision, origin: j.origin, changes: j.changes })).digest('hex').slice(0, 16);
    assert.equal(planId(p), whole);
  }
});

test('changeJsonText is JSON.stringify(changeToJson(c)), byte for byte, for every kind of change', () => {
  const db = openDatabase(':memory:');
  const holder = new SnapshotHolder(emptySnapshot());
  const ctx = { store: new ResourceStore(db), holder, bus: new EventBus() };
  applyPlan(ctx, plan([...pool('eu'), ...pool('us')]));
  const odd: DesiredRow[] = [
    // nested values, unicode and characters JSON escapes, null and absent fields, a secret field, a source file
    { kind: 'pool', key: 'odd "pool" ü\u2028', fields: { name: 'odd "pool" ü\u2028', description: null, tags: { b: [1, { x: 'y' }], a: true }, zero: 0, empty: '' }, source: 'pools/odd.yaml' },
    { kind: 'apikey', key: 'k1', fields: { name: 'k1', keyHash: 'secret-hash', scopes: ['read'] } },
  ];
  const mixed = planChanges({ desired: [...pool('eu', 5), ...pool('ap'), ...odd], actual: holder.current, revision: SHA, newId: (kind, key) => `new:${kind}/${key}`, tenantId: 'default' });
  assert.ok(mixed.counts.create > 0 && mixed.counts.update > 0 && mixed.counts.delete > 0);
  const cases = [...mixed.changes];
  // a create as older nodes sent it, with its field list; one without a key (the id stands in)
  const create = mixed.changes.find((c) => c.op === 'create' && c.kind === 'pool')!;
  cases.push({ ...create, fields: [{ field: 'name', before: null, after: 'listed' }] });
  const { key: _key, source: _source, ...bare } = create.after!;
  cases.push({ ...create, after: bare as typeof create.after });
  for (const c of cases) assert.equal(changeJsonText(c), JSON.stringify(changeToJson(c)), `${c.op} ${c.kind} ${c.id}`);
  assert.ok(changeJsonText(cases.find((c) => c.kind === 'apikey')!).includes('"after":"[redacted]"'));
});

test('provenance text: commit, signer, applied time and plan id; REST writes say so', () => {
  const at = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const rows: { name: string; given: Parameters<typeof makeProvenance>[0]; want: string }[] = [
    { name: 'nothing applied', given: { commit: null, signer: null, revision: null, origin: null, appliedAt: null, planId: null }, want: 'commit=none signer=none applied=none plan=none' },
    { name: 'a signed commit', given: { commit: SHA, signer: FPR, revision: SHA, origin: 'git', appliedAt: at, planId: '0123456789abcdef' }, want: `commit=${SHA} signer=${FPR} applied=2026-01-02T03:04:05Z plan=0123456789abcdef` },
    { name: 'unsigned (requireSignature false)', given: { commit: SHA, signer: null, revision: SHA, origin: 'git', appliedAt: at, planId: '0123456789abcdef' }, want: `commit=${SHA} signer=none applied=2026-01-02T03:04:05Z plan=0123456789abcdef` },
    { name: 'a REST write after the commit', given: { commit: SHA, signer: FPR, revision: 'api:1234', origin: 'api', appliedAt: at, planId: 'fedcba9876543210' }, want: `commit=${SHA} signer=${FPR} applied=2026-01-02T03:04:05Z plan=fedcba9876543210 rest=api:1234` },
    { name: 'REST only, no commit ever', given: { commit: null, signer: null, revision: 'api:1', origin: 'api', appliedAt: at, planId: 'fedcba9876543210' }, want: 'commit=none signer=none applied=2026-01-02T03:04:05Z plan=fedcba9876543210 rest=api:1' },
  ];
  for (const r of rows) {
    const p = makeProvenance(r.given);
    assert.equal(p.text, r.want, r.name);
    assert.deepEqual(txtValueOf(p.rdata), { value: r.want }, `${r.name}: RDATA holds the text`);
  }
});

test('nextProvenance: a git plan sets commit and signer, a REST plan keeps them', () => {
  const git = nextProvenance(NO_PROVENANCE, plan(pool('eu')), 1000, { signer: FPR, planId: 'p1' });
  assert.deepEqual([git.commit, git.signer, git.revision, git.origin, git.appliedAt, git.planId], [SHA, FPR, SHA, 'git', 1000, 'p1']);
  const rest = nextProvenance(git, { ...plan(pool('us'), 'api:x'), origin: 'api' }, 2000, { planId: 'p2' });
  assert.deepEqual([rest.commit, rest.signer, rest.revision, rest.origin, rest.appliedAt, rest.planId], [SHA, FPR, 'api:x', 'api', 2000, 'p2']);
});

test('applyPlan moves the provenance with every recorded revision (an empty git commit too) and records the plan id', () => {
  const db = openDatabase(':memory:');
  const store = new ResourceStore(db);
  const holder = new SnapshotHolder(emptySnapshot());
  const ctx = { store, holder, bus: new EventBus(), now: () => 5000 };
  const p1 = plan(pool('eu'));
  applyPlan(ctx, p1, { meta: { signer: FPR } });
  assert.equal(holder.provenance.commit, SHA);
  assert.equal(holder.provenance.signer, FPR);
  assert.equal(holder.provenance.planId, planId(p1));
  // an empty commit on top: recorded, no swap, but the node now serves that commit
  const snap = holder.current;
  const empty = planChanges({ desired: pool('eu'), actual: holder.current, revision: 'd'.repeat(40), newId: () => 'x', tenantId: 'default' });
  applyPlan(ctx, empty, { meta: { signer: FPR }, recordEmpty: true });
  assert.equal(holder.current, snap);
  assert.equal(holder.provenance.commit, 'd'.repeat(40));
  // an empty plan that is not recorded changes nothing
  const before = holder.provenance;
  applyPlan(ctx, { ...empty, revision: 'api:noop', origin: 'api' });
  assert.equal(holder.provenance, before);
  // a plan id given in meta (a plan from the config stream) is kept
  const p2 = planChanges({ desired: pool('us'), actual: holder.current, revision: 'api:2', newId: () => 'm2', tenantId: 'default' });
  applyPlan(ctx, { ...p2, origin: 'api' }, { meta: { planId: 'from-origin-node' } });
  assert.equal(holder.provenance.planId, 'from-origin-node');
  // a restart reads the same provenance back from the revisions table
  const loaded = loadProvenance(db);
  assert.deepEqual({ ...loaded, rdata: undefined }, { ...holder.provenance, rdata: undefined });
  assert.equal(loaded.text, `commit=${'d'.repeat(40)} signer=${FPR} applied=1970-01-01T00:00:05Z plan=from-origin-node rest=api:2`);
  db.close();
});
