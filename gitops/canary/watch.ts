import type { Core } from '../../runtime/app.js';
import { readSignals, type Signals } from '../watch/signals.js';
import type { CanaryNodeVerdict, CanaryReport } from './msg.js';
import { decideCanary, type CanaryJudgement } from './decide.js';
import type { CanaryPhase, CanaryRecord, CanaryStore } from './store.js';
import type { Liveness } from '../../runtime/cluster/port.js';

/** A canary revision as `GET /cluster` and `GET /gitops/status` show it (schema `CanaryStatus`). */
export interface CanaryStatus {
  revision: string;
  phase: CanaryPhase;
  /** the canary nodes */
  nodes: string[];
  bakeMs: number;
  /** when the leader queued the canary plan (Unix ms) */
  publishedAt: number;
  /** when the bake ends: the last canary node's apply + bakeMs; null until every canary node applied it, and once decided */
  until: number | null;
  /** when this node recorded the decision (Unix ms); null while baking */
  decidedAt: number | null;
  /** baking: what the fan-out waits for, or the breach about to abort it; aborted: why; promoted: null */
  reason: string | null;
  /** the git revision canary nodes return to on abort */
  previous: string;
  /** per canary node: live, applied, signals and breach (as of the decision once decided) */
  verdicts: CanaryNodeVerdict[];
}

/**
 * The signals side of canary apply on one node: this node's own report while it bakes a canary
 * revision it applied (the baseline is read right after the apply; after a restart, at the first
 * report, since the answer counters start again at zero), the reports peers put in their
 * heartbeats, and the judgement and status built from them. The clock is injected for tests.
 */
export class CanaryWatch {
  private readonly baselines = new Map<string, Signals>();
  private readonly peers = new Map<string, CanaryReport>();

  constructor(
    private readonly core: Pick<Core, 'holder' | 'health' | 'ports'>,
    private readonly store: CanaryStore,
    private readonly live: Pick<Liveness, 'isLive'>,
    private readonly self: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** A canary plan was applied here: its baseline is now (one canary bakes at a time: earlier baselines go). */
  applied(revision: string): void {
    this.baselines.clear();
    this.baselines.set(revision, readSignals(this.core, this.now()));
  }

  /** A peer's heartbeat: its canary report, or none (it bakes nothing, or its canary was decided). */
  heard(node: string, report: CanaryReport | undefined): void {
    if (node === this.self) return;
    if (report) this.peers.set(node, report); else this.peers.delete(node);
  }

  /** This node's report for its heartbeat: only while a canary revision it applied is baking. */
  report(): CanaryReport | undefined {
    const rec = this.store.baking();
    if (!rec || rec.appliedAt === undefined || !rec.spec.nodes.includes(this.self)) return undefined;
    let baseline = this.baselines.get(rec.revision);
    if (!baseline) { baseline = readSignals(this.core, this.now()); this.baselines.clear(); this.baselines.set(rec.revision, baseline); }
    return { revision: rec.revision, appliedAt: rec.appliedAt, baseline, current: readSignals(this.core, this.now()) };
  }

  /** The judgement of a baking canary from every canary node's report, as of now. */
  judge(rec: CanaryRecord): CanaryJudgement {
    const reports = rec.spec.nodes.map((node) => (node === this.self
      ? { node, live: true, report: this.report() }
      : { node, live: this.live.isLive(node), report: this.peers.get(node) }));
    return decideCanary(rec.revision, rec.spec, reports, this.now());
  }

  /** The latest canary revision this node knows of, or null. */
  status(): CanaryStatus | null {
    const rec = this.store.latest();
    if (!rec) return null;
    const base = { revision: rec.revision, nodes: rec.spec.nodes, bakeMs: rec.spec.bakeMs, publishedAt: rec.spec.publishedAt, previous: rec.spec.previous.revision };
    if (rec.phase === 'baking') {
      const j = this.judge(rec);
      return { ...base, phase: 'baking', until: j.until, decidedAt: null, reason: j.reason, verdicts: j.nodes };
    }
    const d = rec.decision;
    return { ...base, phase: rec.phase, until: null, decidedAt: rec.decidedAt ?? null, reason: d?.reason ?? null, verdicts: d?.verdicts ?? [] };
  }
}
