import type { Reconciler } from '../reconcile.js';
import { stalled, transient, type ReconcileError } from '../errors.js';
import { checkAgainstActual, validateManifests } from '../validate/validate.js';
import { validationEnv } from '../validate/names.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { routingCasesOf, type RoutingCase } from '../load/index.js';
import { OffloadError, type PlanJob } from '../offload/offload.js';
import type { Loaded } from './load.js';
import type { Verified } from './verify.js';

/** The stalled ManifestsInvalid error for a list of problems (each file:line). */
export function invalid(problems: string[]): ReconcileError {
  return stalled('ManifestsInvalid', `${problems.length} problem${problems.length === 1 ? '' : 's'} in the manifests: ${problems[0]}${problems.length > 1 ? ' …' : ''}`, { problems });
}

/** The ReconcileError of a failed offload request: FetchFailed and worker failures are transient, a plan that cannot be made is stalled. */
export function offloadError(err: unknown): ReconcileError {
  if (!(err instanceof OffloadError)) return transient('ApplyFailed', (err as Error).message, { cause: err });
  if (err.reason === 'ManifestsInvalid') return stalled('ManifestsInvalid', err.message, { cause: err, problems: [err.message] });
  return transient(err.reason === 'FetchFailed' ? 'FetchFailed' : 'ApplyFailed', err.message, { cause: err });
}

/** What validation hands on: the desired rows (or the offload worker's job holding them) and the routing test cases of the commit. */
export interface Validated { desired: DesiredRow[] | PlanJob; cases: RoutingCase[] }

/**
 * validate: schemas, unknown kinds, unique names, references, required-when rules — every
 * problem. A commit that validates is remembered as `r.loaded` (with its verdict), so later polls
 * of the same head skip verify, load and validate; the check against the actual rows runs every
 * time. With the offload worker the checks run there and this step waits for them. Returns the
 * desired rows and the routing test cases. Without `verified` (a rollback to a revision verified
 * when it was first applied) nothing is remembered. Errors: stalled ManifestsInvalid.
 */
export async function validateStep(r: Reconciler, sha: string, verified: Verified | undefined, loaded: Loaded): Promise<Validated> {
  const remember = (v: { desired: DesiredRow[] | undefined; cases: RoutingCase[] }) => {
    if (verified) r.loaded = { sha, stamp: r.keyringStamp(), commit: verified.commit, signer: verified.signer, ...v };
  };
  if ('job' in loaded) {
    const out = await loaded.job.validated.promise.catch((err: unknown) => { throw offloadError(err); });
    if (out.problems) throw invalid(out.problems);
    const cases = out.cases ?? [];
    remember({ desired: undefined, cases });
    return { desired: loaded.job, cases };
  }
  let v: { desired: DesiredRow[]; cases: RoutingCase[] };
  if ('desired' in loaded) {
    v = loaded;
  } else {
    const out = validateManifests(loaded.manifests, validationEnv(r.core.config, r.core.env));
    if (out.problems.length) throw invalid(out.problems);
    v = { desired: out.desired, cases: routingCasesOf(loaded.manifests) };
    remember(v);
  }
  const clash = checkAgainstActual(v.desired, r.core.holder.current, validationEnv(r.core.config, r.core.env));
  if (clash.length) throw invalid(clash);
  return v;
}
