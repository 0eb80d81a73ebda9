import { performance } from 'node:perf_hooks';
import type { Reconciler, ReconcileRequest } from '../reconcile.js';
import type { ReconcileError } from '../errors.js';
import type { Logger } from '../../runtime/log/logger.js';
import type { Plan } from '../../core/plan/types.js';
import type { Signer } from '../verify/signature.js';
import { sourceStep } from './source.js';
import { verifyStep } from './verify.js';
import { loadStep } from './load.js';
import { validateStep } from './validate.js';
import { holdUnsafe, planStep } from './plan.js';
import { applyStep } from './apply.js';
import { holdTrafficChange } from '../replay/hold.js';
import { testStep } from './test.js';
import { rollbackStep, type RolledBack } from '../rollback/apply.js';
import { canaryGate, publishCanary } from './canary.js';

/** A reconcile that ran to its end: applied, recorded an empty commit, or found nothing to do. */
export interface Finished {
  result: 'applied' | 'noop' | 'unchanged';
  sha: string;
  signer: Signer | undefined;
  plan: Plan;
  drift: boolean;
}

/** A reconcile that stopped after the source step: the head is a revision already refused. */
export interface Skipped { result: 'skipped'; sha: string; refused: ReconcileError }

/** A reconcile that failed at some step. */
export interface Failed { result: 'failed'; error: ReconcileError }

/** How one reconcile ended, for the outcome recorder. */
export type Outcome = Finished | Skipped | Failed | RolledBack;

/**
 * What a reconcile reached so far, for the outcome recorder also when a step fails: the head, the
 * plan (its counts are logged, a held-back plan's too), per-step timings, and the logger (with the
 * revision once the head is known).
 */
export interface Trace {
  log: Logger;
  timings: Record<string, number>;
  sha?: string;
  plan?: Plan;
}

/** Runs `fn` as the step `name`, recording its duration in `trace.timings` even when it throws. */
async function timed<T>(trace: Trace, name: string, fn: () => T | Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    trace.timings[name] = Math.round((performance.now() - t0) * 10) / 10;
  }
}

/**
 * The steps in order (DESIGN data flow): `source → verify → load → validate → plan → test → apply`
 * (with `gitops.canary`, the canary gate after `plan`, and `publishCanary` in place of `apply`), each
 * taking what earlier steps returned; the first failure throws (a ReconcileError, or anything else
 * the caller classifies). Stops early for a head refused before (`skipped`) and for an applied
 * head without drift (`unchanged`). A pending rollback runs first, and when it is applied it ends
 * the run (`rolledback`); the rollback guard learns of every apply.
 */
export async function runSteps(r: Reconciler, req: ReconcileRequest, trace: Trace): Promise<Finished | Skipped | RolledBack> {
  if (r.rollback.state.pending) {
    const rolledBack = await timed(trace, 'rollback', () => rollbackStep(r, trace));
    if (rolledBack) return rolledBack;
  }
  const { sha, refused } = await timed(trace, 'source', () => sourceStep(r, req));
  trace.sha = sha;
  if (refused) return { result: 'skipped', sha, refused };
  trace.log = trace.log.child({ revision: sha });
  const verified = await timed(trace, 'verify', () => verifyStep(r, sha));
  const loaded = await timed(trace, 'load', () => loadStep(r, sha));
  const { desired, cases } = await timed(trace, 'validate', () => validateStep(r, sha, verified, loaded));
  const planned = await timed(trace, 'plan', async () => {
    const p = await planStep(r, sha, desired);
    trace.plan = p.plan;
    holdUnsafe(p.plan, req.force);
    await holdTrafficChange(r.core, p.plan, req.force, trace.log);
    return p;
  });
  const route = r.core.config.gitops.canary ? await timed(trace, 'canary', () => canaryGate(r, sha, planned)) : 'direct';
  const done = { sha, signer: verified.signer, plan: planned.plan, drift: planned.drift };
  if (planned.unchanged) return { result: 'unchanged', ...done };
  await timed(trace, 'test', () => testStep(r, planned.plan, cases));
  // ends the reconcile as waiting (CanaryBaking): the stream carries the plan from here
  if (route === 'canary') {
    await planned.idReady;
    publishCanary(r, req, sha, verified, planned);
  }
  // the reading the rollback watch compares with: right before the apply
  const baseline = planned.drift ? undefined : r.rollback.baseline();
  const result = await timed(trace, 'apply', () => applyStep(r, req, sha, verified, planned));
  r.rollback.afterApply({ sha, result, drift: planned.drift, forced: Boolean(req.force), baseline });
  return { result, ...done };
}
