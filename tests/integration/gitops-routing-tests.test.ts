import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { gslbctl } from '../helpers/gslbctl.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/config-repo');

/** Routing tests of the example repo: www fails over inside eu-west; app maps 10.20/16 to .11 first. */
const routing = (primary: string) => `apiVersion: gslb/v1
kind: RoutingTest
metadata: {name: www}
spec:
  cases:
    - name: primary answers
      query: {name: www.example.test}
      expect: {answers: [${primary}]}
    - name: second member takes over
      query: {name: www.example.test}
      assumeHealth: [{pool: eu-west, ipAddress: 127.0.0.10, healthy: false}]
      expect: {answers: [127.0.0.11]}
    - name: mapped network first
      query: {name: app.example.test, ecsSubnet: 10.20.1.0/24}
      expect: {answers: [127.0.0.11, 127.0.0.10], ordered: true}
`;

const geoService = `apiVersion: gslb/v1
kind: Service
metadata: {name: near}
spec: {domain: near.example.test., pool: global-web, algorithm: geo-ip}
---
apiVersion: gslb/v1
kind: RoutingTest
metadata: {name: near}
spec:
  cases:
    - name: nearest first
      query: {name: near.example.test, clientIp: 81.2.69.142}
      expect: {oneOf: [127.0.0.10]}
`;

describe('routing tests in the config repo', () => {
  let fx: GitFixture;
  let d: TestDaemon;
  let good = '';
  const reconcile = async () => (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;

  before(async () => {
    fx = await startGitFixture();
    fx.copyTree(EXAMPLE);
    fx.repo.write('tests/routing.yaml', routing('127.0.0.10'));
    good = fx.repo.commit('Example config with routing tests', fx.ops);
    d = await startTestDaemon({ gitops: fx.gitops });
  });
  after(async () => {
    await d?.stop();
    await fx?.close();
  });

  it('applies a revision whose tests pass; RoutingTest manifests create no rows', async () => {
    const s = await reconcile();
    assert.equal(s.ready, true, s.message);
    assert.equal(s.lastAppliedRevision, good);
    const h = (await api(d.url, 'GET', '/api/v1/gitops/history')).body;
    assert.equal(h[0].creates, 17, 'the same rows as the example without tests');
  });

  it('refuses a revision whose tests fail, reporting every failing case with file:line', async () => {
    // swap the EU priorities: www would now answer 127.0.0.11 first, and the tests say otherwise
    const eu = (await import('node:fs')).readFileSync(join(EXAMPLE, 'pools/eu-west.yaml'), 'utf8').replace('priority: 1', 'priority: 9');
    fx.repo.write('pools/eu-west.yaml', eu);
    const sha = fx.repo.commit('swap EU priorities', fx.ops);
    const before = d.core.holder.current;
    const s = await reconcile();
    assert.equal(s.ready, false);
    assert.equal(s.reason, 'RoutingTestsFailed', s.message);
    assert.equal(s.errorClass, 'stalled');
    assert.equal(d.core.holder.current, before, 'nothing of the refused revision is applied');
    assert.equal(s.lastAppliedRevision, good);
    assert.deepEqual(s.problems, [
      'tests/routing.yaml:6:7: routing test "www/primary answers" failed: expected answers [127.0.0.10]; got NOERROR [127.0.0.11] (routing-test)',
    ]);
    assert.match(s.message, /^1 of 3 routing test cases failed: tests\/routing\.yaml:6:/);
    const st = (await api(d.url, 'GET', '/api/v1/gitops/status')).body;
    assert.equal(st.recentRejections[0].sha, sha);
    assert.equal(st.recentRejections[0].reason, 'RoutingTestsFailed');
    assert.deepEqual(st.recentRejections[0].problems, s.problems);
    const cli = await gslbctl(['status', '--server', d.url]);
    assert.match(cli.stdout, /Ready:\s+False \(RoutingTestsFailed, stalled\)/);
    assert.match(cli.stdout, /routing test "www\/primary answers" failed/);
  });

  it('lets the revision through once the tests are changed to match', async () => {
    fx.repo.write('tests/routing.yaml', routing('127.0.0.11').replace('ipAddress: 127.0.0.10, healthy: false}]\n      expect: {answers: [127.0.0.11]}', 'ipAddress: 127.0.0.11, healthy: false}]\n      expect: {answers: [127.0.0.10]}'));
    const sha = fx.repo.commit('tests follow the new priorities', fx.ops);
    const s = await reconcile();
    assert.equal(s.ready, true, `${s.message}\n${(s.problems as string[]).join('\n')}`);
    assert.equal(s.lastAppliedRevision, sha);
    good = sha;
  });

  it('gslbctl validate and diff print each failing case (name, file:line, expected and got)', async () => {
    const dir = fx.repo.dir;
    fx.repo.write('tests/routing.yaml', routing('127.0.0.10'));
    fx.repo.write('services/near.yaml', geoService);
    const line = (prefix: string) => `${prefix}tests/routing.yaml:6:7: routing test "www/primary answers" failed: expected answers [127.0.0.10]; got NOERROR [127.0.0.11] (routing-test)`;
    const v = await gslbctl(['validate', dir]);
    assert.equal(v.code, 1, v.stdout + v.stderr);
    assert.equal(v.stdout, `${line(`${dir}/`)}\n`);
    assert.match(v.stderr, /note: .*services\/near\.yaml:\d+:\d+: routing test "near\/nearest first" skipped: needs the City database \(loadbalancer\.geoip\.dbPath\)/);
    assert.match(v.stderr, /routing tests: 2 passed, 1 failed, 1 skipped/);
    const json = await gslbctl(['validate', dir, '--format', 'json']);
    assert.equal(json.code, 1);
    assert.deepEqual((JSON.parse(json.stdout) as { rule: string; line: number }[]).map((p) => [p.rule, p.line]), [['routing-test', 6]]);
    // the daemon has no City database either; its plan endpoint runs the same cases on its state
    fx.repo.remove('services/near.yaml');
    const diff = await gslbctl(['diff', dir, '--server', d.url]);
    assert.equal(diff.code, 2, diff.stdout + diff.stderr);
    // the tests are the only change, and they create no rows
    assert.equal(diff.stdout, `No changes.\n${line(`${dir}/`)}\n`);
    assert.match(diff.stderr, /routing tests: 2 passed, 1 failed, 0 skipped/);
    const db = await gslbctl(['diff', dir, '--db', join(d.dir, 'gslbd.db')]);
    assert.equal(db.code, 2, db.stdout + db.stderr);
    assert.match(db.stdout, new RegExp(`^${line(`${dir}/`).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'));
    fx.repo.resetTo(good);
    const clean = await gslbctl(['validate', dir]);
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
    assert.match(clean.stderr, /routing tests: 3 passed, 0 failed, 0 skipped/);
  });
});
