import type { Reconciler } from '../reconcile.js';
import { stalled, type ReconcileError } from '../errors.js';
import { checkAgainstActual, validateManifests } from '../validate/validate.js';
import { validationEnv } from '../validate/names.js';
import type { DesiredRow } from '../plan/types.js';
import { routingCasesOf, type RoutingCase } from '../load/index.js';
import type { Loaded } from './load.js';
import type { Verified } from './verify.js';

/** The stalled ManifestsInvalid error for a list of problems (each file:line). */
export function invalid(problems: string[]): ReconcileError {
  return stalled('ManifestsInvalid', `${problems.length} problem${problems.length === 1 ? '' : 's'} in the manifests: ${problems[0]}${problems.length > 1 ? ' …' : ''}`, { problems });
}

/** What validation hands on: the desired rows and the routing test cases of the commit. */
export interface Validated { desired: DesiredRow[]; cases: RoutingCase[] }

/**
 * validate: schemas, unknown kinds, unique names, references, required-when rules — every
 * problem. A commit that validates is remembered as `r.loaded` (with its verdict), so later polls
 * of the same head skip verify, load and validate; the check against the actual rows runs every
 * time. Returns the desired rows and the routing test cases. Errors: stalled ManifestsInvalid.
 */
export function validateStep(r: Reconciler, sha: string, verified: Verified, loaded: Loaded): Validated {
  let v: Validated;
  if ('desired' in loaded) {
    v = loaded;
  } else {
    const out = validateManifests(loaded.manifests, validationEnv(r.core.config, r.core.env));
    if (out.problems.length) throw invalid(out.problems);
    v = { desired: out.desired, cases: routingCasesOf(loaded.manifests) };
    r.loaded = { sha, stamp: r.keyringStamp(), commit: verified.commit, signer: verified.signer, ...v };
  }
  const clash = checkAgainstActual(v.desired, r.core.holder.current, validationEnv(r.core.config, r.core.env));
  if (clash.length) throw invalid(clash);
  return v;
}
