import type { ReconcileDeps, ReconcileRequest, Verified } from './context.js';
import type { RunHold } from './hold.js';
import { GslbError } from '../../runtime/errors.js';
import { transient } from '../errors.js';
import type { Planned } from './plan.js';

/**
 * apply: one transaction and one snapshot swap through `core.applySliced` (a large plan in slices), with the commit recorded in
 * the revision's meta. A commit that changes nothing is recorded too (`recordEmpty`), so history
 * and ancestry follow the branch. Observes commit-to-serving for applied, non-drift plans.
 * Runs under the reconcile's write gate when the plan step took it (`hold`).
 * Returns `applied`, or `noop` for an empty plan. Errors: transient ApplyConflict (the snapshot
 * moved on: plan again) or ApplyFailed.
 */
export async function applyStep(
  r: Pick<ReconcileDeps, 'metrics' | 'now'> & { core: Pick<ReconcileDeps['core'], 'config' | 'applySliced'> }, hold: RunHold,
  req: ReconcileRequest, sha: string, verified: Verified, planned: Planned,
): Promise<'applied' | 'noop'> {
  const { plan, drift } = planned;
  const c = verified.commit;
  const signer = verified.signer;
  const meta = {
    sha, signer: signer?.fingerprint ?? null, signingKey: signer?.signingKey ?? null, signerUserId: signer?.userId ?? null,
    author: `${c.author.name} <${c.author.email}>`, committer: `${c.committer.name} <${c.committer.email}>`,
    message: c.message.trim(), commitTime: c.committer.timestamp * 1000, forced: Boolean(req.force && !plan.safety.safe),
    trigger: req.trigger.kind, drift, branch: r.core.config.gitops.branch,
  };
  try {
    await r.core.applySliced(plan, { force: Boolean(req.force), meta, recordEmpty: true, held: hold.held, idReady: planned.idReady, rowJson: planned.rowJson });
  } catch (err) {
    if (err instanceof GslbError && err.code === 'API_CONFLICT') throw transient('ApplyConflict', err.message, { cause: err });
    throw transient('ApplyFailed', (err as Error).message, { cause: err });
  }
  const result = plan.changes.length === 0 ? 'noop' : 'applied';
  const swapped = r.now();
  if (result === 'applied' && !drift) {
    const t = req.trigger;
    const fromWebhook = t.kind === 'webhook' && t.after === sha;
    const start = fromWebhook ? t.receivedAt : c.committer.timestamp * 1000;
    r.metrics.commitToServing.observe({ trigger: fromWebhook ? 'webhook' : 'poll' }, Math.max(0, swapped - start) / 1000);
  }
  return result;
}
