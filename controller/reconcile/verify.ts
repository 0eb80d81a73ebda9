import type { Reconciler } from '../reconcile.js';
import { ReconcileError, stalled } from '../errors.js';
import { commitsBetween, descendsFrom, readCommitRaw } from '../source/git-source.js';
import { parseCommitObject, type CommitParts } from '../verify/commit-object.js';
import { verifyCommitSignature, type Signer } from '../verify/signature.js';

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
