import type { Core } from '../app.js';
import type { Plan } from '../../core/plan/types.js';
import { rebasePlanSteps } from '../../core/plan/rebase.js';
import { planIdSteps } from '../../core/plan/plan-id.js';
import { Slicer, runSliced } from '../../core/apply/slicer.js';
import type { ConfigMsg } from './config-msg.js';
import type { ConfigLedger } from './ledger.js';
import { sleep } from './nats-link.js';

/** The outcome of one stream message: applied (or already applied), or stalled with the reason. */
export type ConfigApplyResult = { applied: true } | { applied: false; reason: string; err: unknown };

/**
 * Applies one config-stream message (docs/cluster.md "Config sync"): a revision already in the
 * ledger is skipped (published twice: applied once); otherwise the plan is rebased on the local
 * rows and applied through `core.applySliced` (in slices) as `fromStream`, with its ledger row in the apply's own
 * transaction (also when it rebased to nothing), so a node killed at any point has both or
 * neither; `alsoInTransaction` (a canary node's record of what it applied) joins that transaction
 * with the rebased plan. Failures are retried with backoff until `timeoutMs`; then the result says why.
 */
export async function applyConfigMessage(
  deps: { core: Pick<Core, 'applySliced' | 'applyGate' | 'holder'>; ledger: ConfigLedger; timeoutMs: number }, seq: number, msg: ConfigMsg,
  alsoInTransaction?: (rebased: Plan) => void,
): Promise<ConfigApplyResult> {
  const { core, ledger } = deps;
  if (ledger.seqOf(msg.plan.revision) !== undefined) return { applied: true };
  let provenance: { planId: string; signer?: string } | undefined;
  return retrying(deps.timeoutMs, `seq ${seq} revision ${msg.plan.revision}`, async () => {
    // In slices under the write gate, as a git reconcile applies (docs/architecture.md "Large
    // applies"): a large import from another node does not stop this node's DNS for the length of
    // its plan id, rebase and apply. The gate is held from the rebase on, so the rebased plan is
    // made against the snapshot it is applied to.
    const hold = await core.applyGate.acquire();
    try {
      const slicer = new Slicer(10);
      // the provenance of the origin's plan: its id (the rebased plan may differ) and the commit's signer
      provenance ??= { planId: await runSliced(planIdSteps(msg.plan), slicer), ...(typeof msg.signer === 'string' ? { signer: msg.signer } : {}) };
      const rebased = await runSliced(rebasePlanSteps(msg.plan, core.holder.current), slicer);
      const meta = { ...msg.meta, cluster: { seq, node: msg.node }, ...provenance };
      await core.applySliced(rebased, {
        force: true, fromStream: true, held: hold, meta,
        inTransaction: () => {
          ledger.recordApplied(seq, msg.plan.revision, msg.node, rebased.changes.length, Date.now());
          alsoInTransaction?.(rebased);
        },
      });
    } finally {
      hold.release();
    }
  });
}

/** Retries `fn` with backoff (100 ms doubling, at most 1 s apart) until `timeoutMs`; then says why (the consumer stalls, never skips). */
export async function retrying(timeoutMs: number, what: string, fn: () => void | Promise<unknown>): Promise<ConfigApplyResult> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      await fn();
      return { applied: true };
    } catch (err) {
      if (Date.now() + 100 > deadline) return { applied: false, reason: `${what}: ${(err as Error).message}`, err };
      await sleep(Math.min(100 * 2 ** attempt, 1_000));
    }
  }
}
