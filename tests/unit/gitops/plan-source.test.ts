import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import { planChanges } from '../../../core/plan/plan.js';
import type { DesiredRow } from '../../../core/plan/types.js';

const desired = (source: string, weight = 1): DesiredRow[] => [
  { kind: 'pool', key: 'eu', fields: { name: 'eu' }, source },
  { kind: 'member', key: 'eu/10.0.0.1:80', fields: { ipAddress: '10.0.0.1', port: 80, weight, priority: 0, enabled: true, rumUrl: null }, refs: [{ field: 'poolId', kind: 'pool', key: 'eu' }], source },
];
const plan = (d: DesiredRow[], actual = emptySnapshot()) => planChanges({ desired: d, actual, revision: 'r', newId: (k, key) => `${k}/${key}`, tenantId: 'default' });
const applied = (d: DesiredRow[]) => nextSnapshot(emptySnapshot(), plan(d).changes.map((c) => ({ op: 'put', row: c.after! })), 'r', 0);

test('re-planning the applied desired state is empty (the unchanged fast path)', () => {
  assert.deepEqual(plan(desired('a.yaml'), applied(desired('a.yaml'))).changes, []);
});

test('a field change is still an update with the field-level diff', () => {
  const p = plan(desired('a.yaml', 5), applied(desired('a.yaml')));
  assert.deepEqual(p.changes.map((c) => [c.op, c.kind, c.fields]), [['update', 'member', [{ field: 'weight', before: 1, after: 5 }]]]);
});

test('a manifest moved to another file updates the rows source, so a 409 names the right file', () => {
  const p = plan(desired('b.yaml'), applied(desired('a.yaml')));
  assert.deepEqual(p.changes.map((c) => [c.op, c.kind, c.fields, c.after!.source]), [
    ['update', 'pool', [{ field: 'source', before: 'a.yaml', after: 'b.yaml' }], 'b.yaml'],
    ['update', 'member', [{ field: 'source', before: 'a.yaml', after: 'b.yaml' }], 'b.yaml'],
  ]);
});
