import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadManifests } from '../../../gitops/load/index.js';
import { checkAgainstActual, sortProblems, validateManifests } from '../../../gitops/validate/validate.js';
import { nameRules } from '../../../runtime/tenancy/names.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import type { ValidationEnv } from '../../../runtime/ports/kinds.js';
import '../../../runtime/kinds-all.js';
import type { Row } from '../../../core/model/types.js';

const txt = (name: string, spec: string) => `apiVersion: gslb/v1\nkind: TxtRecord\nmetadata:\n  name: ${name}\nspec:\n${spec}`;

function check(files: Record<string, string>, env: ValidationEnv = {}) {
  const l = loadManifests(Object.entries(files).map(([path, text]) => ({ path, text })));
  const v = validateManifests(l.manifests, env);
  return { problems: sortProblems([...l.problems, ...v.problems]), desired: v.desired };
}

test('kind TxtRecord maps to one txtrecord row: the name normalised, ttl defaulted', () => {
  const { problems, desired } = check({ 't.yaml': txt('spf', '  name: Example.test\n  values: ["v=spf1 -all"]\n') });
  assert.deepEqual(problems, []);
  assert.deepEqual(desired, [{ kind: 'txtrecord', key: 'spf', source: 't.yaml', fields: { name: 'example.test.', values: ['v=spf1 -all'], ttl: 300 }, refs: [] }]);
});

test('TxtRecord problems are reported at file:line (table)', () => {
  const names = nameRules({ dns: { domain: 'example.test', nsNames: [], soa: { mname: '' } } as never, tenancy: { operatorTenant: 'default', delegations: [{ suffix: 'alpha.example.test', tenant: 'alpha' }], requireDelegation: false } as never });
  const rows: { name: string; given: Record<string, string>; env?: ValidationEnv; want: string[] }[] = [
    { name: 'no values', given: { 't.yaml': txt('a', '  name: a.example.test\n  values: []\n') }, want: ['t.yaml:7:11: spec.values = []: must NOT have fewer than 1 items (length)'] },
    { name: 'a duplicate value', given: { 't.yaml': txt('a', '  name: a.example.test\n  values: [x, x]\n') }, want: ['t.yaml:7:15: spec.values.1 = "x": the same value twice'] },
    { name: 'a wildcard', given: { 't.yaml': txt('a', '  name: "*.example.test"\n  values: [x]\n') }, want: ['t.yaml:6:9: spec.name = "*.example.test": wildcard names are not supported for TXT records'] },
    { name: 'one name twice', given: { 't.yaml': `${txt('a', '  name: a.example.test\n  values: [x]\n')}---\n${txt('b', '  name: A.example.test.\n  values: [y]\n')}` }, want: ['t.yaml:14:9: spec.name = "A.example.test.": name a.example.test. is already declared by TxtRecord "a" (t.yaml)'] },
    { name: 'a name delegated to another tenant', given: { 't.yaml': txt('a', '  name: _x.alpha.example.test\n  values: [x]\n') }, env: { names }, want: ['t.yaml:6:9: spec.name = "_x.alpha.example.test": the name is under alpha.example.test., delegated to another tenant'] },
  ];
  for (const r of rows) {
    const { problems } = check(r.given, r.env);
    assert.equal(problems.length, r.want.length, `${r.name}: ${JSON.stringify(problems)}`);
    r.want.forEach((w, i) => assert.ok(problems[i]!.startsWith(w), `${r.name}: got ${problems[i]}, want ${w}`));
  }
});

test('a git TxtRecord may not take a name held over the REST API or by another tenant', () => {
  const row = (id: string, tenantId: string, name: string): Row => ({ kind: 'txtrecord', id, tenantId, origin: 'api', revision: 'api:1', name, values: ['v'], ttl: 300 });
  const actual = nextSnapshot(emptySnapshot(), [
    { op: 'put', row: row('t1', 'default', 'own.example.test.') },
    { op: 'put', row: row('t2', 'beta', 'beta.example.test.') },
  ], 'api:1', 1);
  const { desired } = check({
    'a.yaml': txt('own', '  name: own.example.test\n  values: [x]\n'),
    'b.yaml': txt('theirs', '  name: beta.example.test\n  values: [x]\n'),
    'c.yaml': txt('free', '  name: free.example.test\n  values: [x]\n'),
  });
  assert.deepEqual(checkAgainstActual(desired, actual), [
    'a.yaml: TxtRecord "own": name own.example.test. is not available: it holds TXT record t1 created over the REST API; delete it there first',
    'b.yaml: TxtRecord "theirs": name beta.example.test. is not available: a TXT record of another tenant uses it',
  ]);
});
