import type { ReconcileDeps } from './context.js';
import { invalid, offloadError } from './failures.js';
import { checkAgainstActual, validateManifests } from '../validate/validate.js';
import { validationEnv } from '../validate/names.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { routingCasesOf, type RoutingCase } from '../load/index.js';
import type { PlanJob } from '../offload/offload.js';
import type { Loaded } from './load.js';

/**
 * What validation hands on: the desired rows (or the offload worker's job holding them) and the
 * routing test cases of the commit, and what was validated just now (`fresh`: worth remembering
 * with the commit's verdict; absent when the rows were remembered already).
 */
export interface Validated {
  desired: DesiredRow[] | PlanJob;
  cases: RoutingCase[];
  fresh?: { desired: DesiredRow[] | undefined; cases: RoutingCase[] };
}

/** What the validate steps need: the config and environment names resolve against, and the current rows. */
export interface ValidateDeps { core: Pick<ReconcileDeps['core'], 'config' | 'env' | 'holder'> }

/**
 * validate: schemas, unknown kinds, unique names, references, required-when rules — every
 * problem. With the offload worker the checks run there and this step waits for them. Returns the
 * desired rows and the routing test cases; a commit validated now comes back `fresh`, for the
 * Reconciler to remember (so later polls of the same head skip verify, load and validate).
 * Errors: stalled ManifestsInvalid.
 */
export async function validateStep(r: ValidateDeps, loaded: Loaded): Promise<Validated> {
  if ('job' in loaded) {
    const out = await loaded.job.validated.promise.catch((err: unknown) => { throw offloadError(err); });
    if (out.problems) throw invalid(out.problems);
    const cases = out.cases ?? [];
    return { desired: loaded.job, cases, fresh: { desired: undefined, cases } };
  }
  if ('desired' in loaded) return { desired: loaded.desired, cases: loaded.cases };
  const out = validateManifests(loaded.manifests, validationEnv(r.core.config, r.core.env));
  if (out.problems.length) throw invalid(out.problems);
  const v = { desired: out.desired, cases: routingCasesOf(loaded.manifests) };
  return { ...v, fresh: v };
}

/**
 * The check of desired rows against the actual ones (names taken by rows git does not own), run
 * every time, also for a remembered commit; the offload worker runs it itself. Errors: stalled
 * ManifestsInvalid.
 */
export function checkActualStep(r: ValidateDeps, v: Validated): void {
  if (!Array.isArray(v.desired)) return;
  const clash = checkAgainstActual(v.desired, r.core.holder.current, validationEnv(r.core.config, r.core.env));
  if (clash.length) throw invalid(clash);
}
