import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestDaemon, api } from '../helpers/daemon.js';
import { startGitFixture } from '../helpers/git-fixture.js';
import { waitFor } from '../helpers/proc.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/config-repo');

test('a node without the git lease does not pull: the reconcile waits (NotLeader) and changes nothing', async () => {
  const fx = await startGitFixture();
  fx.copyTree(EXAMPLE);
  const first = fx.repo.commit('Add the example config', fx.ops);
  const d = await startTestDaemon({ gitops: fx.gitops }, { GITOPS_WEBHOOK_SECRET: fx.webhookSecret });
  try {
    // the loop's own first reconcile applies the first commit
    await waitFor(async () => (await api(d.url, 'GET', '/api/v1/gitops/status')).body.lastAppliedRevision === first, 30000);
    let leader = false;
    d.core.ports.gitLeader = { holds: () => leader, leader: () => 'other-node' };
    fx.repo.write('pools/extra.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata:\n  name: extra\nspec:\n  members:\n    - {ipAddress: 10.9.9.9, port: 80}\n');
    const second = fx.repo.commit('Add a pool', fx.ops);
    const before = d.core.holder.current;
    const waiting = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    assert.equal(waiting.reason, 'NotLeader');
    assert.equal(waiting.errorClass, 'waiting');
    assert.equal(waiting.failures, 0, 'waiting for the lease is not a failure');
    assert.equal(waiting.lastAppliedRevision, first);
    assert.equal(d.core.holder.current, before, 'nothing was pulled or applied');
    leader = true;
    const applied = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    assert.equal(applied.ready, true, applied.message);
    assert.equal(applied.lastAppliedRevision, second);
  } finally {
    await d.stop();
    await fx.close();
  }
});
