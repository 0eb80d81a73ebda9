import { DEFAULT_TENANT } from '../core/model/types.js';
import type { Snapshot } from '../core/snapshot/snapshot.js';
import { loadManifests } from './load/index.js';
import { routingCasesOf, type RoutingCase } from './routing/kind.js';
import type { ValidationEnv } from '../runtime/ports/kinds.js';
import type { KindRegistry } from './kinds/registry.js';
import { planChanges } from '../core/plan/plan.js';
import type { SafetyOptions } from '../core/plan/safety.js';
import type { Plan } from '../core/plan/types.js';
import type { SourceFile } from './source/git-source.js';
import { checkAgainstActual, sortProblems, validateManifests } from './validate/validate.js';

/** The outcome of planning a manifest set without applying it. */
export interface DryRun {
  valid: boolean; problems: string[]; manifests: number; plan: Plan | undefined;
  /** the RoutingTest cases of the files (run them with runRoutingCasesForPlan) */
  cases: RoutingCase[];
}

/**
 * load → validate → plan for a set of files against a snapshot, applying nothing (`gslbctl diff`,
 * `apply --dry-run`, POST /gitops/plan). New rows get ids `new:<kind>/<key>` so the output is
 * stable. Pure apart from the inputs.
 */
export function dryRun(files: readonly SourceFile[], actual: Snapshot, opts: { env?: ValidationEnv; safety?: SafetyOptions; revision?: string; kinds?: KindRegistry } = {}): DryRun {
  const loaded = loadManifests(files);
  const v = validateManifests(loaded.manifests, opts.env ?? {}, opts.kinds);
  const problems = sortProblems([...loaded.problems, ...v.problems]);
  if (problems.length === 0) problems.push(...checkAgainstActual(v.desired, actual, opts.env ?? {}, opts.kinds));
  if (problems.length) return { valid: false, problems, manifests: loaded.manifests.length, plan: undefined, cases: [] };
  const plan = planChanges({
    desired: v.desired, actual, revision: opts.revision ?? 'working-tree', tenantId: DEFAULT_TENANT,
    newId: (kind, key) => `new:${kind}/${key}`, ...(opts.safety ? { safety: opts.safety } : {}),
  });
  return { valid: true, problems: [], manifests: loaded.manifests.length, plan, cases: routingCasesOf(loaded.manifests) };
}
