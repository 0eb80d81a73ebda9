import { parseDuration } from '../../runtime/config/duration.js';
import type { GitOpsStatus } from '../status.js';
import type { ReconcileDeps, ReconcileRequest, Verified } from './context.js';
import { stalled, transient, waiting } from '../errors.js';
import type { Planned } from './plan.js';

/** How a reconcile goes on after the canary gate: apply here as usual, or publish a canary plan. */
export type CanaryRoute = 'direct' | 'canary';

const short = (sha: string) => sha.slice(0, 12);

/**
 * What the canary gate needs: the config and `core.ports.canary`, the bus and the history of
 * applied revisions, the apply counters, and the status a promoted revision is recorded in.
 */
export type CanaryGateDeps = Pick<ReconcileDeps, 'metrics'> & {
  core: Pick<ReconcileDeps['core'], 'config' | 'ports' | 'bus'>;
  store: Pick<ReconcileDeps['store'], 'lastApplied' | 'history'>;
  status: GitOpsStatus;
};

/**
 * The canary gate, right after `plan` (docs/gitops.md "Canary apply"). With `gitops.canary` and
 * config sync, a new revision whose plan changes rows goes to the canary nodes first. Returns
 * `direct` (apply here as without a canary) for: no canary configured, a drift correction, an
 * empty plan, the first revision (nothing to return to), and a promoted revision this node's
 * stream consumer has passed (then the status takes it as applied). Returns `canary` for a revision
 * to publish. A newer head while another revision bakes supersedes it: an abort is published and
 * the new head goes out at the next reconcile (one canary at a time); while the other revision is
 * still queued in the outbox (not yet in the stream), the new head waits. Errors: stalled CanaryFailed
 * (aborted; refused until a newer commit, like any stalled head); waiting CanaryBaking (queued,
 * baking, or promoted and not yet applied here); transient ApplyFailed (the supersede could not
 * be published).
 */
export async function canaryGate(r: CanaryGateDeps, sha: string, planned: Planned): Promise<CanaryRoute> {
  const port = r.core.ports.canary;
  if (!r.core.config.gitops.canary || !port || planned.drift) return 'direct';
  const st = port.state(sha);
  if (st?.phase === 'aborted') {
    throw stalled('CanaryFailed', `the canary of revision ${short(sha)} was aborted: ${st.reason ?? 'no reason given'}; it is not applied again: push a newer commit`, { problems: st.reason ? [st.reason] : [] });
  }
  if (st?.phase === 'queued' || st?.phase === 'baking') {
    throw waiting('CanaryBaking', `revision ${short(sha)} is ${st.phase === 'queued' ? 'queued for' : 'baking on'} the canary nodes; the other nodes apply it once it is promoted`);
  }
  if (st?.phase === 'promoted') {
    if (!st.settled) throw waiting('CanaryBaking', `revision ${short(sha)} was promoted; this node applies it from the config stream`);
    adoptPromoted(r, sha);
    return 'direct';
  }
  if (planned.plan.changes.length === 0 || !r.store.lastApplied()) return 'direct';
  const other = port.inFlight();
  if (other && other.revision !== sha) {
    const rev = short(other.revision);
    // a plan still in the outbox is not in the stream yet: an abort must not overtake it
    if (other.phase === 'queued') throw waiting('CanaryBaking', `revision ${rev} is queued for the canary nodes; ${short(sha)} follows once it is decided`);
    let published: boolean;
    try {
      published = await port.supersede(other.revision, short(sha));
    } catch (err) {
      throw transient('ApplyFailed', `revision ${rev} is baking and could not be superseded by ${short(sha)}: ${(err as Error).message}`, { cause: err });
    }
    if (!published) throw waiting('CanaryBaking', `revision ${rev} was decided already (its decision is on its way through the config stream); ${short(sha)} goes to the canary nodes next`);
    throw waiting('CanaryBaking', `revision ${rev} was baking: aborted as superseded by ${short(sha)}, which goes to the canary nodes next`);
  }
  return 'canary';
}

/**
 * canary (in place of `apply`): queues the plan as a canary plan on the config stream, without
 * applying it here, with the canary nodes, bake time and thresholds of `gitops.canary` and the
 * last applied revision as the one to return to. Always throws waiting CanaryBaking: the reconcile
 * that follows the decision finishes the revision (see `followCanary`).
 */
export function publishCanary(r: { core: Pick<ReconcileDeps['core'], 'config' | 'ports'>; store: Pick<ReconcileDeps['store'], 'history'> }, req: ReconcileRequest, sha: string, verified: Verified, planned: Planned): never {
  const c = r.core.config.gitops.canary!;
  const last = r.store.history(1)[0]!;
  const commit = verified.commit;
  const bakeMs = parseDuration(c.bakeTime) ?? 120_000;
  r.core.ports.canary!.start(planned.plan, {
    signer: verified.signer?.fingerprint ?? null,
    spec: {
      nodes: c.nodes, bakeMs, thresholds: { minHealthyShare: c.minHealthyShare, maxServfailRate: c.maxServfailRate, minQueries: c.minQueries },
      previous: { revision: last.sha, signer: last.signer },
    },
    meta: {
      signingKey: verified.signer?.signingKey ?? null, signerUserId: verified.signer?.userId ?? null,
      author: `${commit.author.name} <${commit.author.email}>`, committer: `${commit.committer.name} <${commit.committer.email}>`,
      message: commit.message.trim(), commitTime: commit.committer.timestamp * 1000, forced: Boolean(req.force && !planned.plan.safety.safe),
      trigger: req.trigger.kind, drift: false, branch: r.core.config.gitops.branch, canary: true,
    },
  });
  throw waiting('CanaryBaking', `revision ${short(sha)} queued for the canary nodes ${c.nodes.join(', ')} (bake ${c.bakeTime}); the other nodes apply it once it is promoted`);
}

/** A promoted revision applied here from the stream: the status and metrics take it as this reconcile's apply. */
function adoptPromoted(r: CanaryGateDeps, sha: string): void {
  const s = r.status;
  const h = r.store.history(1)[0];
  if (s.lastAppliedRevision === sha || h?.sha !== sha) return;
  s.lastAppliedRevision = sha; s.lastAppliedAt = h.appliedAt; s.lastSigner = h.signer;
  if (h.creates + h.updates + h.deletes > 0) s.lastPlan = { create: h.creates, update: h.updates, delete: h.deletes };
  r.metrics.apply.inc({ result: 'success' });
  r.metrics.lastApplyInfo.reset();
  r.metrics.lastApplyInfo.set({ sha, signer: h.signer ?? '' }, 1);
  // every node applied it from the stream, which announces nothing: the leader announces it once
  r.core.bus.emit('gitops_promoted', { revision: sha, creates: h.creates, updates: h.updates, deletes: h.deletes });
}

