import type { Plan } from '../../core/plan/types.js';
import type { CanarySpec } from './msg.js';
import type { CanaryCoordinator } from './coordinator.js';
import type { CanaryPhase, CanaryStore } from './store.js';
import type { CanaryStatus, CanaryWatch } from './watch.js';
import type { ClusterMetrics, ConfigLedger, ConfigMsg } from '../../runtime/cluster/port.js';

export type { CanaryStatus } from './watch.js';

/** A revision's canary as this node knows it. */
export interface CanaryState {
  /** `queued`: in this node's outbox, not yet read back from the stream */
  phase: CanaryPhase | 'queued';
  /** why it was aborted; null otherwise */
  reason: string | null;
  /** this node's consumer is past the canary plan (applied, or skipped after an abort) */
  settled: boolean;
}

/** What the GitOps controller asks of canary apply (`core.ports.canary`; docs/gitops.md "Canary apply"). */
export interface CanaryPort {
  state(revision: string): CanaryState | undefined;
  /** the canary revision baking now, or else one still queued in the outbox, if any */
  inFlight(): { revision: string; phase: 'queued' | 'baking' } | undefined;
  /**
   * Queues `plan` on the config stream as a canary plan, through the outbox, without applying it
   * here: this node applies it from the stream like every other (at once if it is a canary node).
   */
  start(plan: Plan, c: { signer: string | null; spec: Omit<CanarySpec, 'publishedAt'>; meta: Record<string, unknown> }): void;
  /**
   * Publishes an abort of the baking `revision`, superseded by the newer head `by`: true; false when
   * this node had published a decision for it already. Errors: the publish failed.
   */
  supersede(revision: string, by: string): Promise<boolean>;
  /** the latest canary revision for the status routes, or null */
  status(): CanaryStatus | null;
}

declare module '../../runtime/ports/parts.js' {
  interface Ports {
    /** canary apply over config sync; absent without config sync */
    canary?: CanaryPort;
  }
}

/** The port over the cluster part's canary pieces. */
export function canaryPort(deps: {
  node: string; store: CanaryStore; ledger: ConfigLedger; watch: CanaryWatch; coordinator: CanaryCoordinator;
  metrics: ClusterMetrics; flush: () => void; now?: () => number;
}): CanaryPort {
  const { store, ledger } = deps;
  const now = deps.now ?? Date.now;
  const queued = () => new Set(ledger.pendingRevisions());
  return {
    state(revision) {
      const rec = store.get(revision);
      if (rec) return { phase: rec.phase, reason: rec.decision?.reason ?? null, settled: ledger.seqOf(revision) !== undefined };
      return queued().has(revision) ? { phase: 'queued', reason: null, settled: false } : undefined;
    },
    inFlight() {
      const baking = store.baking()?.revision;
      if (baking) return { revision: baking, phase: 'baking' };
      // a canary plan still in the outbox (the bus is down, or the publish is under way); its
      // message is one text (start), so messages written in parts are not read
      const queued = ledger.pendingWhole().find((p) => (JSON.parse(p.body) as ConfigMsg).canary !== undefined)?.revision;
      return queued ? { revision: queued, phase: 'queued' } : undefined;
    },
    start(plan, c) {
      const at = now();
      const msg: ConfigMsg = { plan, node: deps.node, at, signer: c.signer, canary: { ...c.spec, publishedAt: at }, meta: c.meta };
      ledger.enqueue(plan.revision, JSON.stringify(msg), at);
      deps.metrics.canary.inc({ result: 'started' });
      deps.flush();
    },
    supersede: (revision, by) => deps.coordinator.supersede(revision, by),
    status: () => deps.watch.status(),
  };
}
