import type { Reconciler } from '../reconcile.js';
import { ReconcileError, stalled } from '../errors.js';
import { annotatedTagsAt, changedPaths, commitsBetween, descendsFrom, readCommitRaw } from '../source/git-source.js';
import { parseCommitObject, type CommitParts } from '../verify/commit-object.js';
import { verifyCommitSignature, verifyDetachedSignature, type Signer } from '../verify/signature.js';
import { countQuorum, describeQuorum, rulesTouched, type CoSignature } from '../verify/quorum.js';

/** A verified commit: its parts, and the signer when signatures are required. */
export interface Verified { commit: CommitParts; signer: Signer | undefined }

/**
 * verify: the commit's OpenPGP signature and signer, and that it descends from the last applied
 * one. The signature verdict of a commit is cached (`r.loaded`); ancestry depends on what was
 * applied since, so it is checked every time. Errors: stalled (SignatureMissing, SignatureInvalid,
 * SignerUnknown, SignerNotAllowed, KeyringInvalid, HistoryRewound, …).
 */
export async function verifyStep(r: Reconciler, sha: string): Promise<Verified> {
  const g = r.core.config.gitops;
  const stamp = r.keyringStamp();
  try {
    let verified: Verified;
    if (r.loaded && r.loaded.sha === sha && r.loaded.stamp === stamp) {
      verified = { commit: r.loaded.commit, signer: r.loaded.signer };
    } else {
      const commit = parseCommitObject(await readCommitRaw(r.source.gitdir, sha));
      verified = { commit, signer: g.requireSignature ? await verifyCommitSignature(commit, await r.keyring(), g.allowedSigners) : undefined };
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
async function verifyHistory(r: Reconciler, sha: string, last: string): Promise<void> {
  const g = r.core.config.gitops;
  const stamp = r.keyringStamp();
  if (r.goodCommits.stamp !== stamp) r.goodCommits = { stamp, shas: new Set() };
  const good = r.goodCommits.shas;
  const range = (await commitsBetween(r.source.gitdir, sha, last)).filter((c) => c !== sha && !good.has(c));
  const keys = range.length ? await r.keyring() : [];
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
async function checkQuorum(r: Reconciler, sha: string, last: string | undefined, head: Signer | undefined): Promise<void> {
  const g = r.core.config.gitops;
  const touched = rulesTouched(g.quorum, await changedPaths(r.source.gitdir, last, sha));
  if (touched.length === 0) return;
  const sigs: CoSignature[] = head ? [{ signer: head, source: 'commit' }] : [];
  const ignored: string[] = [];
  const keys = await r.keyring();
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
