import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import type { PoolRow } from '../../core/model/types.js';

const POOL = 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: web}\nspec:\n  members:\n    - {ipAddress: 192.0.2.1, port: 443}\n';

describe('gitops source over HTTPS-style token auth (git http-backend requiring a token)', () => {
  let fx: GitFixture;
  let good: TestDaemon | undefined;
  let bad: TestDaemon | undefined;

  before(async () => {
    fx = await startGitFixture({ token: 'repo-token-123', gitops: { pathPrefix: 'gslb', auth: { tokenEnv: 'GSLB_GIT_TOKEN' } } });
    fx.repo.write('gslb/pools/web.yaml', POOL);
    // outside pathPrefix, and in a dot-folder: neither is read (both would be invalid manifests)
    fx.repo.write('README.yaml', 'not: a manifest\n');
    fx.repo.write('gslb/.ci/job.yaml', 'kind: [\n');
    fx.repo.commit('web pool', fx.ops);
  });
  after(async () => {
    await good?.stop();
    await bad?.stop();
    await fx?.close();
  });

  it('fetches with the token from the env var gitops.auth.tokenEnv names, reading only pathPrefix', async () => {
    good = await startTestDaemon({ gitops: fx.gitops }, { GSLB_GIT_TOKEN: 'repo-token-123' });
    const s = (await api(good.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    assert.equal(s.ready, true, s.message);
    assert.deepEqual([...rowsOf<PoolRow>(good.core.holder.current, 'pool').values()].map((p) => [p.name, p.source]), [['web', 'gslb/pools/web.yaml']]);
  });

  it('a second fetch transfers only the new objects (the fetched head is offered as a have)', async () => {
    const packs = () => {
      const dir = join(good!.dir, 'gitops-cache');
      const [cache] = readdirSync(dir);
      const pack = join(dir, cache!, 'objects/pack');
      return readdirSync(pack).filter((f) => f.endsWith('.pack')).map((f) => statSync(join(pack, f)).size);
    };
    for (let i = 0; i < 100; i++) fx.repo.write(`docs/notes-${i}.txt`, `note ${i} ${'x'.repeat(200)}\n`);
    fx.repo.commit('bulk', fx.ops);
    assert.equal((await api(good!.url, 'POST', '/api/v1/gitops/reconcile', {})).body.ready, true);
    const before = packs();
    const big = Math.max(...before);
    fx.repo.write('gslb/pools/web.yaml', POOL.replace('192.0.2.1', '192.0.2.2')).commit('move web', fx.ops);
    assert.equal((await api(good!.url, 'POST', '/api/v1/gitops/reconcile', {})).body.ready, true);
    const added = packs().filter((n) => !before.includes(n));
    assert.equal(added.length, 1);
    assert.ok(added[0]! < big / 4, `incremental pack ${added[0]} bytes vs ${big} for the bulk commit`);
  });

  it('the webhook is refused with 403 when no secret is configured, and ignores other branches', async () => {
    // `good` runs without GITOPS_WEBHOOK_SECRET in its environment
    const hook = fx.webhook('github');
    assert.equal((await api(good!.url, 'POST', '/api/v1/gitops/webhook', hook.body, hook.headers)).status, 403);
    const other = await startTestDaemon({ gitops: fx.gitops }, { GSLB_GIT_TOKEN: 'repo-token-123', GITOPS_WEBHOOK_SECRET: fx.webhookSecret });
    try {
      const body = JSON.stringify({ ref: 'refs/heads/feature', after: 'b'.repeat(40) });
      const mac = createHmac('sha256', fx.webhookSecret).update(body).digest('hex');
      const r = await api(other.url, 'POST', '/api/v1/gitops/webhook', body, { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${mac}` });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { accepted: false, reason: 'ref refs/heads/feature is not refs/heads/main' });
    } finally {
      await other.stop();
    }
  });

  it('a local path (like an SSH URL) is fetched with the system git', async () => {
    const local = await startTestDaemon({ gitops: { ...fx.gitops, repoURL: fx.repo.dir, auth: {} } });
    try {
      const s = (await api(local.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
      assert.equal(s.ready, true, s.message);
      assert.equal(s.lastAppliedRevision, fx.repo.head());
      assert.deepEqual([...rowsOf<PoolRow>(local.core.holder.current, 'pool').values()].map((p) => p.name), ['web']);
    } finally {
      await local.stop();
    }
  });

  it('a wrong token is a transient FetchFailed: no revision is refused, nothing changes, the token is not logged', async () => {
    bad = await startTestDaemon({ gitops: fx.gitops }, { GSLB_GIT_TOKEN: 'wrong-token-456' });
    const rejected: unknown[] = [];
    bad.core.bus.on('gitops_rejected', (e) => rejected.push(e));
    const before = bad.core.holder.current;
    const s = (await api(bad.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    assert.equal(s.ready, false);
    assert.equal(s.reason, 'FetchFailed');
    assert.equal(s.errorClass, 'transient');
    assert.ok(s.failures >= 1);
    assert.equal(bad.core.holder.current, before);
    assert.deepEqual(rejected, []);
    assert.match(await bad.core.metrics.metrics(), /gslbd_gitops_fetch_total\{result="failure"/);
    assert.ok(!bad.logs.text().includes('wrong-token-456'), 'the token never reaches the logs');
    // the retry comes sooner than the 1h poll interval (backoff starts at about 1 s)
    assert.ok(s.nextAttemptAt - Date.now() < 5_000, `next attempt in ${s.nextAttemptAt - Date.now()} ms`);
  });
});
