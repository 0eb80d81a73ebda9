import type { Core } from '../../runtime/app.js';
import type { Plan } from '../../core/plan/types.js';
import { applyConfigMessage, retrying, type ConfigApplyResult, type ConfigLedger } from '../../runtime/cluster/port.js';
import { canaryOf, decisionKey, type CanaryDecision } from './msg.js';
import type { GateStep } from './gate.js';
import type { CanaryStore } from './store.js';
import { undoPlan } from './undo.js';

/** What running the gate's steps needs. */
export interface GateStepDeps {
  core: Pick<Core, 'apply' | 'applySliced' | 'applyGate' | 'holder' | 'bus'>;
  ledger: ConfigLedger;
  store: CanaryStore;
  timeoutMs: number;
  /** after this canary node applied a canary plan (the watch takes its baseline) */
  onCanaryApplied?: (revision: string) => void;
}

/** An empty plan: the carrier of a transaction that writes bookkeeping rows only. */
const emptyPlan = (revision: string, baseVersion: number): Plan => ({
  revision, origin: 'git', baseVersion, changes: [], counts: { create: 0, update: 0, delete: 0 },
  safety: { safe: true, existing: 0, updates: 0, deletes: 0, maxChangePercent: 100, minExisting: 0 },
});

/**
 * Runs one gate step (gitops/canary/gate.ts) and returns whether it went through (docs/cluster.md
 * "Canary plans in the stream"). Every step that records a sequence writes its ledger row and its
 * canary bookkeeping in one SQLite transaction through `core.apply` (the one write path), so a node
 * killed at any point resumes exactly at the next message. `hold` records nothing in the ledger.
 */
export async function runGateStep(deps: GateStepDeps, step: GateStep): Promise<ConfigApplyResult> {
  const { core, ledger, store } = deps;
  switch (step.op) {
    case 'apply':
      return applyConfigMessage(deps, step.seq, step.msg);
    case 'canary': {
      const { msg, seq } = step;
      const spec = canaryOf(msg)!;
      const fresh = ledger.seqOf(msg.plan.revision) === undefined;
      const r = await applyConfigMessage(deps, seq, msg, (rebased) => store.applied(seq, msg.plan.revision, spec, msg.node, rebased, Date.now()));
      if (r.applied && fresh) deps.onCanaryApplied?.(msg.plan.revision);
      return r;
    }
    case 'hold':
      return retrying(deps.timeoutMs, `seq ${step.seq} canary ${step.msg.plan.revision}`, () => store.noted(step.seq, step.msg.plan.revision, canaryOf(step.msg)!, step.msg.node));
    case 'skip': {
      const { msg, seq } = step;
      if (ledger.seqOf(msg.plan.revision) !== undefined) return { applied: true };
      return retrying(deps.timeoutMs, `seq ${seq} aborted canary ${msg.plan.revision}`, () => {
        core.apply(emptyPlan(msg.plan.revision, core.holder.current.version), {
          fromStream: true, inTransaction: () => ledger.recordApplied(seq, msg.plan.revision, msg.node, 0, Date.now()),
        });
      });
    }
    case 'decide':
      return decide(deps, step.seq, step.decision);
  }
}

/**
 * Records a decision. The first decision of a baking revision settles it; on a canary node that
 * applied an aborted revision, the undo plan (gitops/canary/undo.ts) is applied in the same transaction,
 * recorded as the revision the canary returned to. A later decision for a settled revision is
 * recorded and changes nothing (the first one in stream order wins on every node). Emits
 * `gitops_canary` on the bus once the first decision is recorded.
 */
async function decide(deps: GateStepDeps, seq: number, d: CanaryDecision): Promise<ConfigApplyResult> {
  const { core, ledger, store } = deps;
  const key = decisionKey(d);
  if (ledger.seqOf(key) !== undefined) return { applied: true };
  let settled = false;
  const r = await retrying(deps.timeoutMs, `seq ${seq} ${key}`, async () => {
    const rec = store.get(d.revision);
    const applied = rec?.phase === 'baking' && d.verdict === 'abort' ? store.appliedPlanOf(d.revision) : undefined;
    const prev = rec?.spec.previous;
    const undo = applied && prev && applied.changes.length > 0 ? undoPlan(applied, core.holder.current, prev.revision, 'git') : undefined;
    const record = () => {
      ledger.recordApplied(seq, key, d.node, undo?.changes.length ?? 0, Date.now());
      settled = store.decide(d, Date.now());
    };
    if (undo && prev) {
      // the inverse of a canary plan is as large as the plan: in slices too
      await core.applySliced(undo, {
        force: true, fromStream: true, recordEmpty: true, inTransaction: record,
        meta: { cluster: { seq, node: d.node }, signer: prev.signer, trigger: 'canary-abort', canaryAborted: d.revision, message: `canary revision ${d.revision} aborted: ${d.reason ?? ''}` },
      });
    } else {
      core.apply(emptyPlan(key, core.holder.current.version), { fromStream: true, inTransaction: record });
    }
  });
  if (r.applied && settled) core.bus.emit('gitops_canary', { revision: d.revision, verdict: d.verdict, reason: d.reason });
  return r;
}
