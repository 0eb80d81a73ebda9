import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadManifests, routingCasesOf } from '../../../gitops/load/index.js';
import { validateManifests } from '../../../gitops/validate/validate.js';
import { planChanges } from '../../../core/plan/plan.js';
import { judgeCase, type Observed } from '../../../gitops/routing/judge.js';
import { describeResult, runRoutingCasesForPlan } from '../../../gitops/routing/run.js';
import type { RoutingExpect } from '../../../gitops/routing/kind.js';
import '../../../runtime/kinds-all.js';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';
import { Slicer } from '../../../core/apply/slicer.js';

test('judgeCase: answers as a set or in order, rcode, first answer one of (table)', () => {
  const got = (rcode: string, ...answers: string[]): Observed => ({ rcode, answers });
  const rows: { name: string; expect: RoutingExpect; got: Observed; want: boolean }[] = [
    { name: 'same set, other order', expect: { answers: ['10.0.0.1', '10.0.0.2'] }, got: got('NOERROR', '10.0.0.2', '10.0.0.1'), want: true },
    { name: 'ordered, other order', expect: { answers: ['10.0.0.1', '10.0.0.2'], ordered: true }, got: got('NOERROR', '10.0.0.2', '10.0.0.1'), want: false },
    { name: 'ordered, same order', expect: { answers: ['10.0.0.1', '10.0.0.2'], ordered: true }, got: got('NOERROR', '10.0.0.1', '10.0.0.2'), want: true },
    { name: 'one missing', expect: { answers: ['10.0.0.1', '10.0.0.2'] }, got: got('NOERROR', '10.0.0.1'), want: false },
    { name: 'one too many', expect: { answers: ['10.0.0.1'] }, got: got('NOERROR', '10.0.0.1', '10.0.0.2'), want: false },
    { name: 'a duplicate is not a set match', expect: { answers: ['10.0.0.1', '10.0.0.1'] }, got: got('NOERROR', '10.0.0.1', '10.0.0.2'), want: false },
    { name: 'no answers expected: NODATA', expect: { answers: [] }, got: got('NOERROR'), want: true },
    { name: 'IPv6 in another spelling', expect: { answers: ['2001:DB8:0::1'] }, got: got('NOERROR', '2001:db8::1'), want: true },
    { name: 'rcode matches', expect: { rcode: 'NXDOMAIN' }, got: got('NXDOMAIN'), want: true },
    { name: 'rcode differs', expect: { rcode: 'NOERROR', answers: [] }, got: got('SERVFAIL'), want: false },
    { name: 'oneOf: first answer listed', expect: { oneOf: ['10.0.0.1', '10.0.0.3'] }, got: got('NOERROR', '10.0.0.3', '10.0.0.2'), want: true },
    { name: 'oneOf: only a later answer listed', expect: { oneOf: ['10.0.0.2'] }, got: got('NOERROR', '10.0.0.3', '10.0.0.2'), want: false },
    { name: 'oneOf: no answer', expect: { oneOf: ['10.0.0.2'] }, got: got('NOERROR'), want: false },
  ];
  for (const r of rows) assert.equal(judgeCase(r.expect, r.got), r.want, r.name);
});

const REPO = `apiVersion: gslb/v1
kind: Pool
metadata: {name: eu}
spec:
  members:
    - {ipAddress: 10.0.0.1, port: 80, priority: 1, weight: 3}
    - {ipAddress: 10.0.0.2, port: 80, priority: 2, weight: 1}
    - {ipAddress: 2001:db8::1, port: 80}
---
apiVersion: gslb/v1
kind: Service
metadata: {name: www}
spec: {domain: www.example.test., pool: eu, algorithm: failover}
---
apiVersion: gslb/v1
kind: Service
metadata: {name: rr}
spec: {domain: rr.example.test., pool: eu}
---
apiVersion: gslb/v1
kind: Service
metadata: {name: wrr}
spec: {domain: wrr.example.test., pool: eu, algorithm: weighted-round-robin}
---
apiVersion: gslb/v1
kind: Service
metadata: {name: near}
spec: {domain: near.example.test., pool: eu, algorithm: geo-ip}
`;

const TESTS = `apiVersion: gslb/v1
kind: RoutingTest
metadata: {name: routing}
spec:
  cases:
    - name: primary
      query: {name: www.example.test}
      expect: {answers: [10.0.0.1]}
    - name: failover
      query: {name: www.example.test.}
      assumeHealth: [{pool: eu, ipAddress: 10.0.0.1, healthy: false}]
      expect: {answers: [10.0.0.2], rcode: NOERROR}
    - name: all IPv4 members, any order
      query: {name: rr.example.test}
      expect: {answers: [10.0.0.2, 10.0.0.1]}
    - name: AAAA
      query: {name: rr.example.test, type: AAAA}
      expect: {answers: ["2001:db8::1"]}
    - name: outside every zone
      query: {name: www.example.org}
      expect: {rcode: REFUSED}
    - name: wrong on purpose
      query: {name: www.example.test}
      assumeHealth: [{pool: eu, ipAddress: 10.0.0.1, healthy: false}]
      expect: {answers: [10.0.0.1]}
    - name: unknown pool
      query: {name: www.example.test}
      assumeHealth: [{pool: nowhere, ipAddress: 10.0.0.1, healthy: false}]
      expect: {answers: [10.0.0.1]}
    - name: geo needs a database
      query: {name: near.example.test, clientIp: 10.1.1.1}
      expect: {oneOf: [10.0.0.1]}
    - name: weighted draw
      query: {name: wrr.example.test}
      expect: {oneOf: [10.0.0.1, 10.0.0.2]}
`;

async function runRepo(files: { path: string; text: string }[], slicer?: Slicer) {
  const loaded = loadManifests(files);
  const v = validateManifests(loaded.manifests);
  assert.deepEqual([...loaded.problems, ...v.problems], []);
  assert.ok(!v.desired.some((d) => d.kind === 'routingtest'), 'RoutingTest manifests create no rows');
  const actual = emptySnapshot();
  const plan = planChanges({ desired: v.desired, actual, revision: 'r1', tenantId: 'default', newId: (kind, key) => `new:${kind}/${key}` });
  return runRoutingCasesForPlan(routingCasesOf(loaded.manifests), actual, plan, { config: validateConfigObject({}), ...(slicer ? { slicer } : {}) });
}

test('in the daemon (a slicer given) the planned state, its zone index and the cases are built and run in slices, with the same results', async () => {
  // 300 more services: a plan long enough for the snapshot and the index to pause several times
  const more = Array.from({ length: 300 }, (_, i) => `---
apiVersion: gslb/v1
kind: Service
metadata: {name: s${i}}
spec: {domain: s${i}.example.test., pool: eu}
`).join('');
  const files = [{ path: 'pools.yaml', text: REPO + more }, { path: 'tests/routing.yaml', text: TESTS }];
  let pauses = 0;
  // budget 0: every step boundary is a pause, so the count shows where the work yields
  const slicer = new Slicer(0, async () => { pauses++; });
  const sliced = await runRepo(files, slicer);
  const atOnce = await runRepo(files);
  assert.deepEqual(sliced, atOnce);
  assert.ok(pauses > 300 / 64 + 9, `the work paused between its steps (${pauses} pauses)`);
});

test('routing test cases run through the DNS answer path on the planned state', async () => {
  const run = await runRepo([{ path: 'pools.yaml', text: REPO }, { path: 'tests/routing.yaml', text: TESTS }]);
  const by = new Map(run.results.map((r) => [r.name, r]));
  const status = Object.fromEntries(run.results.map((r) => [r.name, r.status]));
  assert.deepEqual(status, {
    primary: 'passed', failover: 'passed', 'all IPv4 members, any order': 'passed', AAAA: 'passed', 'outside every zone': 'passed',
    'wrong on purpose': 'failed', 'unknown pool': 'failed', 'geo needs a database': 'skipped', 'weighted draw': 'passed',
  });
  assert.deepEqual([run.passed, run.failed, run.skipped], [6, 2, 1]);
  assert.equal(describeResult(by.get('wrong on purpose')!),
    'tests/routing.yaml:22:7: routing test "routing/wrong on purpose" failed: expected answers [10.0.0.1]; got NOERROR [10.0.0.2] (routing-test)');
  assert.match(describeResult(by.get('unknown pool')!), /^tests\/routing\.yaml:26:7: .*assumeHealth names pool "nowhere", which the revision does not have \(routing-test\)$/);
  assert.match(describeResult(by.get('geo needs a database')!), /skipped: needs the City database \(loadbalancer\.geoip\.dbPath\).*\(routing-test-skipped\)$/);
});

test('routing tests are deterministic: the same answers run after run and in any case order', async () => {
  const many = `apiVersion: gslb/v1
kind: RoutingTest
metadata: {name: draws}
spec:
  cases:
${Array.from({ length: 6 }, (_, i) => `    - {name: "draw ${i}", query: {name: wrr.example.test}, expect: {answers: [10.0.0.1, 10.0.0.2]}}\n    - {name: "rr ${i}", query: {name: rr.example.test}, expect: {answers: [10.0.0.1, 10.0.0.2], ordered: true}}`).join('\n')}
`;
  const a = await runRepo([{ path: 'pools.yaml', text: REPO }, { path: 't.yaml', text: many }]);
  const b = await runRepo([{ path: 'pools.yaml', text: REPO }, { path: 't.yaml', text: many }]);
  assert.deepEqual(a.results.map((r) => r.got), b.results.map((r) => r.got));
  // every case starts from the same counter and seed: all draws and rotations alike
  assert.equal(new Set(a.results.filter((r) => r.name.startsWith('draw')).map((r) => r.got)).size, 1);
  assert.equal(new Set(a.results.filter((r) => r.name.startsWith('rr')).map((r) => r.got)).size, 1);
  assert.ok(a.results.filter((r) => r.name.startsWith('rr')).every((r) => r.status === 'passed'), 'round-robin starts unrotated');
});

test('RoutingTest schema and semantic problems are reported at file:line', () => {
  const bad = `apiVersion: gslb/v1
kind: RoutingTest
metadata: {name: bad}
spec:
  cases:
    - name: same
      query: {name: a.example.test, type: MX}
      expect: {}
    - name: same
      query: {name: a.example.test}
      expect: {ordered: true}
`;
  const loaded = loadManifests([{ path: 't.yaml', text: bad }]);
  const { problems } = validateManifests(loaded.manifests);
  assert.ok(problems.some((p) => p.startsWith('t.yaml:7:') && p.includes('query.type')), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('t.yaml:8:') && p.includes('expect')), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('t.yaml:9:') && p.includes('case "same" is already declared')), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('t.yaml:11:') && p.includes('ordered needs answers')), problems.join('\n'));
});
