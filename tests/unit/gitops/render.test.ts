import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';
import { planChanges } from '../../../core/plan/plan.js';
import { planToJson, renderPlanText } from '../../../core/plan/render.js';

const plan = () => planChanges({
  desired: [{ kind: 'pool', key: 'eu', fields: { name: 'eu' }, source: 'pools/eu.yaml' }],
  actual: emptySnapshot(), revision: 'r1', newId: (k, key) => `${k}-${key}`, tenantId: 'default',
});

test('plan text: colour only when asked, same content either way', () => {
  const plain = renderPlanText(plan());
  const coloured = renderPlanText(plan(), { color: true });
  assert.ok(!plain.includes('\x1b['));
  assert.ok(coloured.includes('\x1b[32m+name: eu\x1b[0m'));
  // stripping the escapes gives the plain text back
  assert.equal(coloured.replace(/\x1b\[[0-9;]*m/g, ''), plain);
  assert.match(plain, /^--- \/dev\/null\n\+\+\+ git\/pool\/eu\t\(pools\/eu\.yaml\)\n@@ create pool "eu" @@\n\+name: eu\nPlan: 1 to create, 0 to update, 0 to delete\.\n$/);
});

test('plan JSON is stable: same input, same bytes', () => {
  assert.equal(JSON.stringify(planToJson(plan())), JSON.stringify(planToJson(plan())));
  assert.deepEqual(Object.keys(planToJson(plan())), ['revision', 'origin', 'baseVersion', 'counts', 'safety', 'changes']);
});
