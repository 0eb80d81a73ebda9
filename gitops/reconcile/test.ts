import type { ReconcileDeps } from './context.js';
import { stalled } from '../errors.js';
import type { RoutingCase } from '../load/index.js';
import type { Plan } from '../../core/plan/types.js';
import { Slicer } from '../../core/apply/slicer.js';
import { describeResult, runRoutingCasesForPlan } from '../routing/run.js';

/**
 * test: the commit's RoutingTest cases against the snapshot its plan would produce (the current
 * one with the plan's changes laid over it), with the daemon's geo databases (docs/gitops.md
 * "Routing tests"). Skipped cases are logged at info. Errors: stalled RoutingTestsFailed, every
 * failing case in `problems` as `file:line: routing test "test/case" failed: expected …; got …`.
 */
export async function testStep(r: { core: Pick<ReconcileDeps['core'], 'holder' | 'config' | 'ports' | 'log'> }, plan: Plan, cases: readonly RoutingCase[]): Promise<void> {
  if (cases.length === 0) return;
  const run = await runRoutingCasesForPlan(cases, r.core.holder.current, plan, { config: r.core.config, geo: r.core.ports.dnsGeo, slicer: new Slicer() });
  const skipped = run.results.filter((c) => c.status === 'skipped');
  if (skipped.length) r.core.log.child({ component: 'gitops' }).info({ revision: plan.revision, skipped: skipped.map(describeResult) }, 'routing tests skipped');
  const failed = run.results.filter((c) => c.status === 'failed').map(describeResult);
  if (failed.length) {
    throw stalled('RoutingTestsFailed', `${failed.length} of ${cases.length} routing test case${cases.length === 1 ? '' : 's'} failed: ${failed[0]}${failed.length > 1 ? ' …' : ''}`, { problems: failed });
  }
}
