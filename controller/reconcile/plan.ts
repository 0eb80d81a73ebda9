import type { Reconciler } from '../reconcile.js';
import { DEFAULT_TENANT } from '../../runtime/model/types.js';
import { stalled, type Reason } from '../errors.js';
import { planChanges } from '../plan/plan.js';
import type { DesiredRow, Plan } from '../plan/types.js';

/** The plan of a commit, and what it means against the last applied one. */
export interface Planned {
  plan: Plan;
  /** the plan re-applies the last applied commit: every change is drift */
  drift: boolean;
  /** the commit is applied and nothing drifted: nothing to apply */
  unchanged: boolean;
}

/** plan: desired × actual → Plan (pure), with the configured safety thresholds. Errors: stalled ManifestsInvalid. */
export function planStep(r: Reconciler, sha: string, desired: DesiredRow[]): Planned {
  let plan: Plan;
  try {
    plan = planChanges({
      desired, actual: r.core.holder.current, revision: sha, newId: () => r.core.newId(),
      tenantId: DEFAULT_TENANT, safety: r.core.config.gitops.safety,
    });
  } catch (err) {
    throw stalled('ManifestsInvalid', (err as Error).message, { cause: err, problems: [(err as Error).message] });
  }
  const last = r.store.lastApplied();
  return { plan, drift: last === sha && plan.changes.length > 0, unchanged: last === sha && plan.changes.length === 0 };
}

/** Holds back an unsafe plan unless forced (DESIGN decision 6). Errors: stalled TooManyDeletes or TooManyUpdates. */
export function holdUnsafe(plan: Plan, force: boolean | undefined): void {
  if (!plan.safety.safe && !force) throw stalled(plan.safety.reason as Reason, plan.safety.message ?? 'plan is unsafe');
}
