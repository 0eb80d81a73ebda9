import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { loadManifests } from '../../../gitops/load/index.js';
import { sortProblems, validateManifests } from '../../../gitops/validate/validate.js';
import '../../../runtime/kinds-all.js';
import { planChanges } from '../../../core/plan/plan.js';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';

const HASH = createHash('sha256').update('gslbf_example').digest('hex');
const key = (name: string, spec: string) => `apiVersion: gslb/v1\nkind: ApiKey\nmetadata:\n  name: ${name}\nspec:\n${spec}`;
const FORM = 'apiVersion: gslb/v1\nkind: Form\nmetadata:\n  name: contact\nspec:\n  name: Contact\n';

function check(files: Record<string, string>) {
  const l = loadManifests(Object.entries(files).map(([path, text]) => ({ path, text })));
  const v = validateManifests(l.manifests);
  return { problems: sortProblems([...l.problems, ...v.problems]), desired: v.desired };
}

test('kind ApiKey maps to a formkey row holding the hash only, its form resolved by name', () => {
  const { problems, desired } = check({
    'forms/contact.yaml': FORM,
    'keys/site.yaml': key('site', `  hash: ${HASH}\n  scopes: [forms:read, submissions:read]\n  form: contact\n`),
  });
  assert.deepEqual(problems, []);
  const row = desired.find((d) => d.kind === 'formkey')!;
  assert.deepEqual(row.fields, { name: 'site', keyHash: HASH, scopes: ['forms:read', 'submissions:read'], createdAt: 0 });
  assert.deepEqual(row.refs, [{ field: 'formId', kind: 'form', key: 'contact' }]);
  const plan = planChanges({ desired, actual: emptySnapshot(), revision: 'c'.repeat(40), newId: (() => { let n = 0; return () => `id-${++n}`; })(), tenantId: 'default' });
  const formRow = plan.changes.find((c) => c.kind === 'form')!.after!;
  const keyRow = plan.changes.find((c) => c.kind === 'formkey')!.after! as Record<string, unknown>;
  assert.equal(keyRow.formId, formRow.id);
  assert.equal(keyRow.origin, 'git');
});

test('kind ApiKey: a hash that is not 64 lower-case hex, an unknown scope, an unknown form and a repeated key are reported at their lines', () => {
  const { problems } = check({
    'keys/a.yaml': key('a', '  hash: ABC\n  scopes: [forms:read]\n'),
    'keys/b.yaml': key('b', `  hash: ${HASH}\n  scopes: [pools:write]\n`),
    'keys/c.yaml': key('c', `  hash: ${HASH}\n  scopes: [forms:read]\n  form: nowhere\n`),
    'keys/d.yaml': key('d', `  hash: ${HASH}\n  scopes: [forms:read]\n  secret: gslbf_plain\n`),
  });
  assert.ok(problems.some((p) => p.startsWith('keys/a.yaml:6:') && /hash/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('keys/b.yaml:') && /scopes/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('keys/c.yaml:') && /no Form named "nowhere"/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('keys/d.yaml:') && /secret/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => /the same key as ApiKey/.test(p)), problems.join('\n'));
});
