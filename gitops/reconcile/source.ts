import type { Reconciler, ReconcileRequest } from '../reconcile.js';
import { waiting, type ReconcileError } from '../errors.js';
import { fetchHead, tagsStamp } from '../source/git-source.js';
import { pinnedOutError } from '../rollback/report.js';
import { holdsNow } from '../../runtime/cluster/port.js';

/** What the source step found: the branch head, and the refusal that still stands for it. */
export interface Fetched {
  sha: string;
  /**
   * the head was refused before and nothing changed since (same keyring, not forced), or it is a
   * revision rolled back and pinned out (not forced): stop here
   */
  refused: ReconcileError | undefined;
}

/**
 * source: fetch the branch head into the local cache. In a cluster with config sync only the
 * holder of the git lease pulls; the others end the reconcile as `waiting` (NotLeader) and receive
 * the applied plan through the config stream (DESIGN decision 8). A head that was rolled back is
 * pinned out: it is not applied again (stalled RolledBack) until a newer commit arrives or the
 * request is forced (docs/gitops.md "Automatic rollback"). Errors: waiting NotLeader; whatever the
 * fetch throws (transient FetchFailed).
 */
export async function sourceStep(r: Reconciler, req: ReconcileRequest): Promise<Fetched> {
  if (!(await holdsNow(r.core.ports.gitLeader))) {
    r.rollback.follow();
    throw waiting('NotLeader', 'another node holds the git lease; its applied revisions arrive through the config stream');
  }
  let sha: string;
  try {
    sha = await fetchHead(r.source);
    r.metrics.fetch.inc({ result: 'success' });
  } catch (err) {
    r.metrics.fetch.inc({ result: 'failure' });
    throw err;
  }
  r.status.observedRevision = sha;
  if (r.source.tags) r.tagStamp = await tagsStamp(r.source.gitdir);
  const stamp = r.refusalStamp();
  const pin = req.force ? undefined : r.rollback.pinned(sha);
  if (pin) return { sha, refused: pinnedOutError(pin) };
  const refused = !req.force && r.refused?.sha === sha && r.refused.stamp === stamp ? r.refused.error : undefined;
  return { sha, refused };
}
