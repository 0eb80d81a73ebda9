import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { makeGpgIdentity, type GpgIdentity } from '../helpers/git-repo.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/config-repo');
const pool = (name: string) => `apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: ${name}}\nspec: {}\n`;

describe('gitops.quorum: 2-of-3 signatures for prod/, co-signed with signed tags (real git and gpg)', () => {
  let fx: GitFixture;
  let d: TestDaemon;
  let alice: GpgIdentity;
  let bob: GpgIdentity;
  let last = '';
  const reconcile = async () => (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
  const names = async () => ((await api(d.url, 'GET', '/api/v1/pools')).body as { name: string }[]).map((p) => p.name);
  /** `git tag -s` by `who` on the head, as a maintainer co-signing it would. */
  const cosign = (name: string, who: GpgIdentity) =>
    fx.repo.git(['-c', `user.signingkey=${who.fingerprint}`, '-c', 'gpg.program=gpg', 'tag', '-s', name, '-m', `co-signed by ${who.fingerprint}`, fx.repo.head()], { GNUPGHOME: who.home });

  before(async () => {
    alice = makeGpgIdentity('Alice Maintainer <alice@example.test>');
    bob = makeGpgIdentity('Bob Maintainer <bob@example.test>');
    // ops, alice and bob are the prod quorum; mallory is in the keyring but not listed
    fx = await startGitFixture();
    writeFileSync(fx.keyringFile, readFileSync(fx.keyringFile, 'utf8') + alice.armoredPublicKey + bob.armoredPublicKey);
    fx.copyTree(EXAMPLE);
    last = fx.repo.commit('Example config (nothing under prod/)', fx.ops);
    d = await startTestDaemon({ gitops: { ...fx.gitops, quorum: [{ path: 'prod/', keys: [fx.ops.fingerprint, alice.fingerprint, bob.fingerprint], required: 2 }] } });
  });
  after(async () => {
    await d?.stop();
    await fx?.close();
    alice?.destroy();
    bob?.destroy();
  });

  it('applies a first revision that touches nothing under prod/ on the usual signature', async () => {
    const s = await reconcile();
    assert.equal(s.ready, true, s.message);
    assert.equal(s.lastAppliedRevision, last);
  });

  it('refuses a change under prod/ with one signature, naming who signed and how many are missing', async () => {
    const sha = fx.repo.write('prod/pools.yaml', pool('prod-web')).commit('prod: add prod-web', fx.ops);
    const s = await reconcile();
    assert.equal(s.ready, false);
    assert.equal(s.errorClass, 'stalled');
    assert.equal(s.reason, 'QuorumNotMet', s.message);
    const want = `changes under prod/ (prod/pools.yaml) need signatures of 2 of 3 listed keys (gitops.quorum[0]): signed by ${fx.ops.fingerprint} (Ops Engineer <ops@example.test>) on the commit; 1 missing`;
    assert.equal(s.message, `commit ${sha.slice(0, 12)}: ${want}; co-sign with a signed tag on the commit (git tag -s)`);
    assert.deepEqual(s.problems, [want]);
    assert.ok(!(await names()).includes('prod-web'));
  });

  it('does not count a tag by an unlisted key, nor an unsigned annotated tag', async () => {
    cosign('cosign-mallory', fx.mallory);
    fx.repo.git(['tag', '-a', 'unsigned-note', '-m', 'looks good', fx.repo.head()]);
    const s = await reconcile();
    assert.equal(s.reason, 'QuorumNotMet', s.message);
    assert.match(s.problems[0], /signed by [0-9A-F]{40} \(Ops Engineer <ops@example\.test>\) on the commit; 1 missing$/);
    assert.ok(s.problems.includes('tag unsigned-note not counted: tag unsigned-note is not signed; gitops.requireSignature is true'), s.problems.join('\n'));
  });

  it('accepts the revision once a second listed maintainer pushes a signed tag', async () => {
    const head = fx.repo.head();
    cosign('cosign-alice', alice);
    const s = await reconcile();
    assert.equal(s.ready, true, `${s.message}\n${(s.problems as string[]).join('\n')}`);
    assert.equal(s.lastAppliedRevision, head);
    assert.ok((await names()).includes('prod-web'));
    last = head;
  });

  it('needs only the usual signature for a change outside prod/', async () => {
    const sha = fx.repo.write('pools/extra.yaml', pool('extra')).commit('add extra outside prod/', fx.ops);
    const s = await reconcile();
    assert.equal(s.ready, true, s.message);
    assert.equal(s.lastAppliedRevision, sha);
  });

  it('refuses a head by a listed key outside allowedSigners first; a head by ops and a tag by bob meet the quorum', async () => {
    fx.repo.write('prod/pools.yaml', pool('prod-web') + '---\n' + pool('prod-api')).commit('prod: add prod-api', bob);
    // bob is listed for prod/ but not in allowedSigners: the head itself is refused first
    assert.equal((await reconcile()).reason, 'SignerNotAllowed');
    fx.repo.resetTo(fx.repo.git(['rev-parse', 'HEAD~1']));
    fx.repo.write('prod/pools.yaml', pool('prod-web') + '---\n' + pool('prod-api')).commit('prod: add prod-api', fx.ops);
    cosign('cosign-bob', bob);
    const s = await reconcile();
    assert.equal(s.ready, true, `${s.message}\n${(s.problems as string[]).join('\n')}`);
    assert.ok((await names()).includes('prod-api'));
  });
});
