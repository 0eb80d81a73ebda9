import type { ReconcileDeps } from './context.js';
import type { RunHold } from './hold.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { getRow } from '../../core/snapshot/snapshot.js';
import { stalled, transient, type Reason } from '../errors.js';
import { planChanges } from '../../core/plan/plan.js';
import type { DesiredRow, Plan } from '../../core/plan/types.js';
import { planOf, type PlanJob } from '../offload/offload.js';
import { startJob } from './load.js';
import { invalid, offloadError } from './failures.js';

/** The plan of a commit, and what it means against the last applied one. */
export interface Planned {
  plan: Plan;
  /** the plan re-applies the last applied commit: every change is drift */
  drift: boolean;
  /** the commit is applied and nothing drifted: nothing to apply */
  unchanged: boolean;
  /**
   * A plan made by the offload worker arrives before its id: the worker hashes it while the apply
   * builds the snapshot and the zone index. Resolves once `plan.id` is set; rejects (with a
   * ReconcileError) when the worker failed meanwhile. Absent when the id is known (or not needed).
   */
  idReady?: Promise<void>;
  /** the JSON text of each change's `after`, as the offload worker made it (ApplyOptions.rowJson) */
  rowJson?: readonly (string | undefined)[];
}

/** What the plan step needs: the core (rows, ids, config, log, write gate), the last applied commit, the offload worker and the repository. */
export type PlanDeps = Pick<ReconcileDeps, 'offload' | 'source'> & {
  core: Pick<ReconcileDeps['core'], 'config' | 'holder' | 'newId' | 'log'>;
  store: Pick<ReconcileDeps['store'], 'lastApplied'>;
};

/** How often a plan made off-thread is made again when the state moved on while it was made. */
const REPLANS = 3;

/**
 * plan: desired × actual → Plan (pure), with the configured safety thresholds; with the offload
 * worker, the worker's plan, under the reconcile's write gate (`hold`). Errors: stalled
 * ManifestsInvalid; transient ApplyConflict when the state kept moving on while the worker planned.
 */
export async function planStep(r: PlanDeps, hold: RunHold, sha: string, desired: DesiredRow[] | PlanJob): Promise<Planned> {
  let plan: Plan;
  let idReady: Promise<void> | undefined;
  let rowJson: readonly (string | undefined)[] | undefined;
  if (!Array.isArray(desired)) {
    ({ plan, idReady, rowJson } = await offloadedPlan(r, hold, sha, desired));
  } else {
    try {
      plan = planChanges({
        desired, actual: r.core.holder.current, revision: sha, newId: () => r.core.newId(),
        tenantId: DEFAULT_TENANT, safety: r.core.config.gitops.safety,
      });
    } catch (err) {
      throw stalled('ManifestsInvalid', (err as Error).message, { cause: err, problems: [(err as Error).message] });
    }
  }
  const last = r.store.lastApplied();
  return { plan, drift: last === sha && plan.changes.length > 0, unchanged: last === sha && plan.changes.length === 0, ...(idReady ? { idReady } : {}), ...(rowJson ? { rowJson } : {}) };
}

/**
 * The offload worker's plan, pulled in chunks (gitops/offload/plan-wire.ts). It was computed
 * against the database state `baseSeq`. Once it arrives the write gate is taken (REST writes wait
 * from here to the end of the apply, `hold`); when `baseSeq` is then the state of the
 * current snapshot, the plan gets the snapshot's version as its base. Otherwise (a REST write
 * landed while the worker planned) the worker plans again, under the gate now, so that plan
 * stands: a stream of REST writes cannot keep a large commit from being applied. The plan is
 * returned without waiting for its id; `idReady` sets it.
 */
async function offloadedPlan(r: PlanDeps, hold: RunHold, sha: string, first: PlanJob): Promise<{ plan: Plan; idReady: Promise<void>; rowJson: (string | undefined)[] }> {
  let job = first;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) {
      job = startJob(r, sha);
      const v = await job.validated.promise.catch((err: unknown) => { throw offloadError(err); });
      if (v.problems) throw invalid(v.problems);
    }
    const summary = await job.planned.promise.catch((err: unknown) => { throw offloadError(err); });
    // from here every way out releases the job (the worker hashes the plan id once released)
    try {
      r.core.log.debug({ component: 'gitops', revision: sha, changes: summary.total, attempt, worker: summary.timings }, 'plan made off the DNS thread');
      await hold.take();
      const holder = r.core.holder;
      if (summary.baseSeq === holder.rowsSeq) {
        const base = holder.current;
        const pulled = await job.changes(summary, (kind, id) => getRow(base, kind, id));
        if (pulled && holder.current === base) {
          const plan = planOf(summary, pulled.changes, base.version);
          const idReady = job.planId.promise.then((id) => { plan.id = id; }, (err: unknown) => { throw offloadError(err); });
          // nobody may wait for it (an unchanged head, a failed test step): no unhandled rejection
          idReady.catch(() => {});
          return { plan, idReady, rowJson: pulled.rowJson };
        }
      }
    } finally {
      job.release();
    }
    // under the gate nothing but this reconcile applies plans (a synchronous write is refused)
    if (attempt + 1 >= REPLANS) throw transient('ApplyConflict', `the state kept changing while ${sha.slice(0, 12)} was planned; plan again`);
  }
}

/** Holds back an unsafe plan unless forced (DESIGN decision 6). Errors: stalled TooManyDeletes or TooManyUpdates. */
export function holdUnsafe(plan: Plan, force: boolean | undefined): void {
  if (!plan.safety.safe && !force) throw stalled(plan.safety.reason as Reason, plan.safety.message ?? 'plan is unsafe');
}
