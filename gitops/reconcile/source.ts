import type { ReconcileDeps, ReconcileRequest, Refusal } from './context.js';
import { waiting, type ReconcileError } from '../errors.js';
import { fetchHead, tagsStamp } from '../source/git-source.js';
import { pinnedOutError } from '../rollback/report.js';
import { holdsNow } from '../../runtime/cluster/port.js';

/** What the source step needs: the git lease, the repository, the fetch counters and the rollback guard. */
export type SourceDeps = Pick<ReconcileDeps, 'source' | 'metrics'> & { core: Pick<ReconcileDeps['core'], 'ports'>; rollback: Pick<ReconcileDeps['rollback'], 'follow' | 'pinned'> };

/**
 * source: fetch the branch head into the local cache and return it. In a cluster with config sync
 * only the holder of the git lease pulls; the others end the reconcile as `waiting` (NotLeader)
 * and receive the applied plan through the config stream (DESIGN decision 8). Errors: waiting
 * NotLeader; whatever the fetch throws (transient FetchFailed).
 */
export async function sourceStep(deps: SourceDeps): Promise<string> {
  if (!(await holdsNow(deps.core.ports.gitLeader))) {
    deps.rollback.follow();
    throw waiting('NotLeader', 'another node holds the git lease; its applied revisions arrive through the config stream');
  }
  try {
    const sha = await fetchHead(deps.source);
    deps.metrics.fetch.inc({ result: 'success' });
    return sha;
  } catch (err) {
    deps.metrics.fetch.inc({ result: 'failure' });
    throw err;
  }
}

/** Whether the fetched head is refused still, and the stamp of the tags fetched with it. */
export interface Standing {
  /** stamp of the fetched tags (gitops.quorum only; else the one before): a new co-signing tag lifts a refusal */
  tagStamp: string;
  /**
   * the head was refused before and nothing changed since (same keyring, not forced), or it is a
   * revision rolled back and pinned out (not forced): stop here
   */
  refused: ReconcileError | undefined;
}

/**
 * The rest of the source step, once the head is known: a head that was rolled back is pinned out,
 * not applied again (stalled RolledBack) until a newer commit arrives or the request is forced
 * (docs/gitops.md "Automatic rollback"); a head refused before stays refused while the keyring
 * and, with gitops.quorum, the tags are unchanged. `before`: the last refusal and tag stamp.
 */
export async function standingStep(
  deps: Pick<SourceDeps, 'source' | 'rollback'> & Pick<ReconcileDeps, 'keyring'>, req: ReconcileRequest, sha: string,
  before: { refused: Refusal | undefined; tagStamp: string },
): Promise<Standing> {
  const tagStamp = deps.source.tags ? await tagsStamp(deps.source.gitdir) : before.tagStamp;
  const stamp = refusalStamp(deps.keyring.stamp(), tagStamp);
  const pin = req.force ? undefined : deps.rollback.pinned(sha);
  if (pin) return { tagStamp, refused: pinnedOutError(pin) };
  const r = before.refused;
  return { tagStamp, refused: !req.force && r?.sha === sha && r.stamp === stamp ? r.error : undefined };
}

/**
 * Stamp of everything a refusal depends on besides the head: the keyring file and, with
 * gitops.quorum, the tags fetched with the head (a maintainer's co-signing tag is a new input).
 */
export const refusalStamp = (keyringStamp: string, tagStamp: string): string => `${keyringStamp}|${tagStamp}`;
