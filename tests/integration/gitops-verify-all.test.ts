import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { commitsBetween } from '../../gitops/source/git-source.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/config-repo');
const pool = (name: string) => `apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: ${name}}\nspec: {}\n`;

describe('gitops.verifyAll against a real git http-backend and gpg', () => {
  let fx: GitFixture;
  let d: TestDaemon;
  let last = '';
  const reconcile = async (daemon = d) => (await api(daemon.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
  const sign = () => ['-c', `user.signingkey=${fx.ops.fingerprint}`, '-c', 'gpg.program=gpg'];
  const gpgEnv = () => ({ GNUPGHOME: fx.ops.home });

  before(async () => {
    fx = await startGitFixture({ gitops: { verifyAll: true } });
    // an unsigned commit before the first applied one: history before it is not a range to verify
    fx.copyTree(EXAMPLE);
    fx.repo.commit('unsigned start');
    last = fx.repo.write('pools/base.yaml', pool('base')).commit('signed base', fx.ops);
    d = await startTestDaemon({ gitops: fx.gitops });
  });
  after(async () => {
    await d?.stop();
    await fx?.close();
  });

  it('applies the first revision on its head signature alone', async () => {
    const s = await reconcile();
    assert.equal(s.ready, true, s.message);
    assert.equal(s.lastAppliedRevision, last);
  });

  it('accepts a signed merge of a signed branch that forked before the last applied commit', async () => {
    fx.repo.git(['checkout', '-q', '-b', 'side', `${last}~1`]);
    fx.repo.write('pools/side.yaml', pool('side')).commit('signed side change', fx.ops);
    fx.repo.git(['checkout', '-q', 'main']);
    fx.repo.write('pools/main.yaml', pool('main')).commit('signed main change', fx.ops);
    fx.repo.git([...sign(), 'merge', '-q', '-S', '--no-ff', '-m', 'merge side', 'side'], gpgEnv());
    const head = fx.repo.head();
    const range = await commitsBetween(join(fx.repo.dir, '.git'), head, last);
    assert.equal(range.length, 3, 'side change, main change and the merge; not the unsigned start');
    const s = await reconcile();
    assert.equal(s.ready, true, s.message);
    assert.equal(s.lastAppliedRevision, head);
    last = head;
  });

  it('refuses a signed head on top of an unsigned commit, naming that commit', async () => {
    const hidden = fx.repo.write('pools/hidden.yaml', pool('hidden')).commit('unsigned, hidden under the head');
    const head = fx.repo.write('pools/cover.yaml', pool('cover')).commit('signed cover', fx.ops);
    const s = await reconcile();
    assert.equal(s.ready, false);
    assert.equal(s.errorClass, 'stalled');
    assert.equal(s.reason, 'SignatureMissing');
    assert.match(s.message, new RegExp(`^commit ${hidden} \\(between the last applied ${last.slice(0, 12)} and the head ${head.slice(0, 12)}\\): commit is not signed`));
    assert.match(s.message, /gitops\.verifyAll/);
    assert.deepEqual(s.problems, [`${hidden}: SignatureMissing: commit is not signed; gitops.requireSignature is true`]);
    assert.equal(s.lastAppliedRevision, last);
    const names = ((await api(d.url, 'GET', '/api/v1/pools')).body as { name: string }[]).map((p) => p.name);
    assert.ok(!names.includes('hidden') && !names.includes('cover'), 'nothing of the refused revision is served');
  });

  it('accepts the same head without verifyAll', async () => {
    const head = fx.repo.head();
    const plain = await startTestDaemon({ gitops: { ...fx.gitops, verifyAll: false } });
    try {
      const s = await reconcile(plain);
      assert.equal(s.ready, true, s.message);
      assert.equal(s.lastAppliedRevision, head);
    } finally {
      await plain.stop();
    }
  });

  it('follows every parent of a merge: an unsigned commit on a merged branch refuses the merge', async () => {
    fx.repo.resetTo(last);
    fx.repo.git(['checkout', '-q', '-b', 'side2', last]);
    const unsigned = fx.repo.write('pools/side2.yaml', pool('side2')).commit('unsigned side change');
    fx.repo.git(['checkout', '-q', 'main']);
    fx.repo.git([...sign(), 'merge', '-q', '-S', '--no-ff', '-m', 'merge side2', 'side2'], gpgEnv());
    const s = await reconcile();
    assert.equal(s.reason, 'SignatureMissing', s.message);
    assert.match(s.message, new RegExp(`^commit ${unsigned} `));
  });

  it('names a commit signed by a key outside allowedSigners', async () => {
    fx.repo.resetTo(last);
    const bad = fx.repo.write('pools/m.yaml', pool('m')).commit('mallory, hidden', fx.mallory);
    fx.repo.write('pools/n.yaml', pool('n')).commit('signed on top', fx.ops);
    const s = await reconcile();
    assert.equal(s.reason, 'SignerNotAllowed', s.message);
    assert.match(s.message, new RegExp(`^commit ${bad} .*${fx.mallory.fingerprint}`));
  });
});
