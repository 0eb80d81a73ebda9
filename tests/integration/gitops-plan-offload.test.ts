import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { repoFiles } from '../bench/gitops-repo.js';
import { planFiles } from '../../gitops/plan-files.js';
import { gitopsControllerOf } from '../../gitops/part.js';
import { longestBlock } from '../helpers/cpu.js';

const ROUTING = `apiVersion: gslb/v1
kind: RoutingTest
metadata: {name: routing}
spec:
  cases:
    - {name: first, query: {name: svc-1.bench.test.}, expect: {oneOf: [10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4]}}
    - {name: wrong, query: {name: svc-2.bench.test.}, expect: {answers: [192.0.2.99]}}
`;

/** A query log sample (docs/dns.md "Query log"): JSON lines with name, type and source. */
const LOG = ['svc-1.bench.test.', 'svc-2.bench.test.', 'svc-29.bench.test.', 'svc-1.bench.test.']
  .map((name, i) => JSON.stringify({ msg: 'dns query', name, type: 'A', src: `192.0.2.${i + 1}` })).join('\n');

test('POST /gitops/plan and /replay plan in the offload worker: the same bodies as on the main thread, without holding it', { timeout: 120_000 }, async () => {
  const dns = { listenAddr: '127.0.0.1', port: 0, domain: 'bench.test' };
  const d = await startTestDaemon({ dns } as never);
  // a database in memory cannot be opened by another thread: everything runs on the main thread
  const m = await startTestDaemon({ dns, database: { path: ':memory:' } } as never);
  try {
    const offload = gitopsControllerOf(d.core)?.offload;
    assert.ok(offload, 'a daemon on a database file has an offload worker, even without gitops.repoURL');
    assert.equal(gitopsControllerOf(m.core)?.offload, undefined);
    // warm both paths (the worker's start, module loading) on a small set
    const small = repoFiles(20);
    await planFiles(d.core, offload, small, 'r1', false);
    await planFiles(d.core, undefined, small, 'r1', false);

    const files = repoFiles(8000);
    // how long this thread is held, in its own CPU time (a loaded machine stretches the wall clock, not this)
    const here = await longestBlock(() => planFiles(d.core, undefined, files, 'rev-1', false));
    const there = await longestBlock(() => planFiles(d.core, offload, files, 'rev-1', false));
    assert.deepEqual(JSON.parse(there.result.json), JSON.parse(here.result.json), 'the same plan and diff either way');
    assert.equal(there.result.plan, undefined, 'the plan itself stays in the worker when nothing here needs it');
    const body = JSON.parse(there.result.json) as { valid: boolean; plan: { counts: { create: number } } };
    assert.equal(body.valid, true);
    assert.equal(body.plan.counts.create, 8000 + 800 * 6, 'every service, and each pool with its 4 members and health check');
    assert.ok(!d.logs.lines.some((l) => l.msg === 'gitops plan: the offload worker failed; planning on the main thread'), 'planned by the worker');
    assert.ok(here.blockMs > 200, `planning 8,000 services on this thread holds it (${here.blockMs.toFixed(0)} ms of CPU at once)`);
    assert.ok(there.blockMs < here.blockMs / 3, `offloaded, the longest hold (${there.blockMs.toFixed(0)} ms of CPU) is a fraction of planning here (${here.blockMs.toFixed(0)} ms)`);

    // through the API: the offloading daemon answers exactly as the one planning on its main thread
    const withCases = [...repoFiles(30), { path: 'tests/routing.yaml', text: ROUTING }];
    const requests: [string, unknown][] = [
      ['/api/v1/gitops/plan', { files: withCases, revision: 'rev-2' }],
      ['/api/v1/gitops/plan', { files: repoFiles(30), revision: 'rev-3' }],
      ['/api/v1/gitops/plan', { files: [{ path: 'bad.yaml', text: 'kind: [' }] }],
      ['/api/v1/gitops/replay', { files: repoFiles(30), log: LOG, revision: 'rev-4' }],
      ['/api/v1/gitops/replay', { files: [{ path: 'bad.yaml', text: 'kind: [' }], log: LOG }],
    ];
    for (const [path, req] of requests) {
      const a = await api(d.url, 'POST', path, req);
      const b = await api(m.url, 'POST', path, req);
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.match(a.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(a.body, b.body, `${path} ${JSON.stringify(req).slice(0, 80)}`);
    }
    const withTests = await api(d.url, 'POST', '/api/v1/gitops/plan', requests[0]![1]);
    assert.deepEqual([withTests.body.routingTests.passed, withTests.body.routingTests.failed], [1, 1], JSON.stringify(withTests.body.routingTests));
    const replayed = await api(d.url, 'POST', '/api/v1/gitops/replay', requests[3]![1]);
    assert.equal(replayed.body.replay.queries, 4, JSON.stringify(replayed.body.replay));
    const bad = await api(d.url, 'POST', '/api/v1/gitops/plan', requests[2]![1]);
    assert.equal(bad.body.valid, false);
    assert.match(bad.body.problems[0], /^bad\.yaml:1:/);
    assert.equal(bad.body.routingTests, null);
  } finally {
    await d.stop();
    await m.stop();
  }
});
