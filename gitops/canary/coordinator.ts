import type { Logger } from '../../runtime/log/logger.js';
import { decisionKey, type CanaryDecision, type DecisionMsg } from './msg.js';
import type { CanaryStore } from './store.js';
import type { CanaryWatch } from './watch.js';
import type { ClusterMetrics, ClusterNames, GitLeader, NatsLink } from '../../runtime/cluster/port.js';

/** What the coordinator works with: the link and names of the config stream, the git lease, the canary store and watch, metrics, log, and the judging period. */
export interface CoordinatorDeps {
  link: NatsLink; names: ClusterNames; lease: GitLeader; store: CanaryStore; watch: CanaryWatch; metrics: ClusterMetrics; log: Logger; tickMs: number;
}

/**
 * The canary coordinator (docs/gitops.md "Canary apply"): every `tickMs`, on the node that holds
 * the git leader lease only, judges the baking canary revision from the canary nodes' reports
 * (CanaryWatch) and publishes `promote` or `abort` on the config stream, with the decision key as
 * message id (a re-publish inside the duplicate window is dropped). Its state is the stream and the
 * heartbeats, so a new lease holder carries on a bake its predecessor started. One decision per
 * revision from this node; if two nodes publish different ones (the lease moved in between), the
 * first in stream order wins on every node. Counts `gslbd_gitops_canary_total{result}` for each
 * decision the stream accepted. Never throws from the timer. An abort of a revision a newer head
 * replaces is published when the controller asks (`supersede`).
 */
export class CanaryCoordinator {
  private readonly enc = new TextEncoder();
  /** revisions this node published a decision for (only the baking one is kept) */
  private readonly sent = new Set<string>();
  private busy = false;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly deps: CoordinatorDeps) {
    this.timer = setInterval(() => void this.tick(), deps.tickMs);
    this.timer.unref();
  }

  /**
   * Publishes an abort of a baking revision because a newer head replaces it. Resolves true when
   * the abort was published now, false when this node had already published a decision for it
   * (then that decision stands). Errors: the publish failed.
   */
  async supersede(revision: string, by: string): Promise<boolean> {
    const { store, watch, names } = this.deps;
    const rec = store.get(revision);
    const verdicts = rec ? watch.judge(rec).nodes : [];
    return this.publish({ revision, verdict: 'abort', reason: `superseded by revision ${by}`, node: names.node, at: Date.now(), verdicts }, 'superseded');
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Publishes a decision; false when one for the revision was published by this node before. */
  private async publish(d: CanaryDecision, result: 'promoted' | 'aborted' | 'superseded'): Promise<boolean> {
    const { link, names, metrics, log } = this.deps;
    if (this.sent.has(d.revision)) return false;
    if (!link.up || !link.js) throw new Error('not connected to NATS');
    const msg: DecisionMsg = { decision: d, node: names.node, at: d.at };
    const ack = await link.js.publish(names.configSubject, this.enc.encode(JSON.stringify(msg)), { msgID: decisionKey(d) });
    this.sent.add(d.revision);
    metrics.published.inc({ type: 'config' });
    if (!ack.duplicate) metrics.canary.inc({ result });
    log[d.verdict === 'promote' ? 'info' : 'warn']({ revision: d.revision, verdict: d.verdict, reason: d.reason, seq: ack.seq }, `canary ${result}`);
    return true;
  }

  private async tick(): Promise<void> {
    const { link, names, store, watch, log } = this.deps;
    if (this.busy || !this.deps.lease.holds() || !link.up) return;
    const rec = store.baking();
    // one canary bakes at a time: what was sent for a revision no longer baking is not needed
    for (const r of this.sent) if (r !== rec?.revision) this.sent.delete(r);
    if (!rec || this.sent.has(rec.revision)) return;
    const j = watch.judge(rec);
    if (j.verdict === 'wait') return;
    this.busy = true;
    try {
      await this.publish({ revision: rec.revision, verdict: j.verdict, reason: j.reason, node: names.node, at: Date.now(), verdicts: j.nodes }, j.verdict === 'promote' ? 'promoted' : 'aborted');
    } catch (err) {
      log.warn({ err, revision: rec.revision }, 'canary decision not published; retrying');
    } finally {
      this.busy = false;
    }
  }
}
