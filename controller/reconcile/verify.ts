import type { Reconciler } from '../reconcile.js';
import { ReconcileError, stalled } from '../errors.js';
import { descendsFrom, readCommitRaw } from '../source/git-source.js';
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
    r.metrics.verify.inc({ result: 'success' });
    return verified;
  } catch (err) {
    r.metrics.verify.inc({ result: 'failure' });
    if (err instanceof ReconcileError) throw err;
    throw stalled('SignatureInvalid', `cannot read commit ${sha}: ${(err as Error).message}`, { cause: err });
  }
}
