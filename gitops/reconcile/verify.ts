import type { ReconcileDeps, Verified } from './context.js';
import { ReconcileError, stalled } from '../errors.js';
import { annotatedTagsAt, changedPaths, commitsBetween, descendsFrom, readCommitRaw } from '../source/git-source.js';
import { parseCommitObject } from '../verify/commit-object.js';
import { verifyCommitSignature, verifyDetachedSignature, type Signer } from '../verify/signature.js';
import { countQuorum, describeQuorum, rulesTouched, type CoSignature } from '../verify/quorum.js';

export type { Verified } from './context.js';

/** What the verify step needs: the gitops config, the last applied commit, the repository, the keyring and the verify counters. */
export type VerifyDeps = Pick<ReconcileDeps, 'source' | 'metrics' | 'keyring'> & { core: Pick<ReconcileDeps['core'], 'config'>; store: Pick<ReconcileDeps['store'], 'lastApplied'> };

/**
 * verify: the commit's OpenPGP signature and signer, and that it descends from the last applied
 * one. The signature verdict of a commit is cached (`cached`: the verdict of this commit under
 * the keyring as it is now, if known); ancestry depends on what was applied since, so it is checked
 * every time. Errors: stalled (SignatureMissing, SignatureInvalid, SignerUnknown,
 * SignerNotAllowed, KeyringInvalid, HistoryRewound, …).
 */
export async function verifyStep(r: VerifyDeps, sha: string, cached: Verified | undefined): Promise<Verified> {
  const g = r.core.config.gitops;
  try {
    let verified: Verified;
    if (cached) {
      verified = cached;
    } else {
      const commit = parseCommitObject(await readCommitRaw(r.source.gitdir, sha));
      verified = { commit, signer: g.requireSignature ? await verifyCommitSignature(commit, await r.keyring.read(), g.allowedSigners) : undefined };
    }
    const last = r.store.lastApplied();
    if (last && !g.allowRewind && !(await descendsFrom(r.source.gitdir, sha, last))) {
      throw stalled('HistoryRewound', `commit ${sha.slice(0, 12)} does not descend from the last applied commit ${last.slice(0, 12)}; push a commit on top of it, or set gitops.allowRewind`);
    }
    if (g.verifyAll && g.requireSignature && last && last !== sha) await verifyHistory(r, sha, last);
    if (g.quorum.length && last !== sha) await checkQuorum(r, sha, last, verified.signer);
    r.metrics.verify.inc({ result: 'success' });
    return verified;
  } catch (err) {
    r.metrics.verify.inc({ result: 'failure' });
    if (err instanceof ReconcileError) throw err;
    throw stalled('SignatureInvalid', `cannot read commit ${sha}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * gitops.verifyAll: every commit reachable from the head but not from the last applied commit
 * (`git rev-list last..head`, every parent of a merge) must carry a valid signature of an allowed
 * signer, as the head must. Commits are checked oldest first and the first bad one refuses the
 * revision, its reason kept (SignatureMissing, SignerNotAllowed, …) and its SHA named in the
 * message. Verdicts of good commits are cached per keyring stamp. Errors: stalled, as for a head.
 */
async function verifyHistory(r: VerifyDeps, sha: string, last: string): Promise<void> {
  const g = r.core.config.gitops;
  const good = r.keyring.goodCommits();
  const range = (await commitsBetween(r.source.gitdir, sha, last)).filter((c) => c !== sha && !good.has(c));
  const keys = range.length ? await r.keyring.read() : [];
  for (const c of range) {
    try {
      await verifyCommitSignature(parseCommitObject(await readCommitRaw(r.source.gitdir, c)), keys, g.allowedSigners);
    } catch (err) {
      if (!(err instanceof ReconcileError)) throw err;
      const where = `commit ${c} (between the last applied ${last.slice(0, 12)} and the head ${sha.slice(0, 12)})`;
      throw stalled(err.reason, `${where}: ${err.message}; gitops.verifyAll requires every commit to be signed by an allowed signer`, { cause: err, problems: [`${c}: ${err.reason}: ${err.message}`] });
    }
    good.add(c);
  }
}

/**
 * gitops.quorum: a revision that changes files under a rule's path (the diff between the last
 * applied commit and the head; every file on the first apply) needs signatures of `required`
 * distinct keys of the rule's list. Signatures counted: the head commit's (verified already) and
 * those of signed annotated tags pointing at the head (`git tag -s`), each verified against the
 * keyring; a tag whose signature does not verify counts for nothing and is named in `problems`.
 * Errors: stalled QuorumNotMet, naming who signed and how many are missing.
 */
async function checkQuorum(r: VerifyDeps, sha: string, last: string | undefined, head: Signer | undefined): Promise<void> {
  const g = r.core.config.gitops;
  const touched = rulesTouched(g.quorum, await changedPaths(r.source.gitdir, last, sha));
  if (touched.length === 0) return;
  const sigs: CoSignature[] = head ? [{ signer: head, source: 'commit' }] : [];
  const ignored: string[] = [];
  const keys = await r.keyring.read();
  for (const tag of await annotatedTagsAt(r.source.gitdir, sha)) {
    try {
      // any key of the keyring may co-sign; the rule's own list decides whether it counts
      sigs.push({ signer: await verifyDetachedSignature(tag.payload, tag.signature, keys, [], `tag ${tag.name}`), source: `tag ${tag.name}` });
    } catch (err) {
      if (!(err instanceof ReconcileError)) throw err;
      ignored.push(`tag ${tag.name} not counted: ${err.message}`);
    }
  }
  const unmet = touched.map((t) => ({ t, v: countQuorum(t.rule, sigs) })).filter(({ v }) => !v.met);
  if (unmet.length === 0) return;
  const lines = unmet.map(({ t, v }) => describeQuorum(t, v));
  throw stalled('QuorumNotMet', `commit ${sha.slice(0, 12)}: ${lines[0]}${lines.length > 1 ? ' …' : ''}; co-sign with a signed tag on the commit (git tag -s)`, { problems: [...lines, ...ignored] });
}
