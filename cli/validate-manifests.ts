import { formatProblem } from '../runtime/config/problem.js';
import { loadManifests } from '../gitops/load/index.js';
import { routingCasesOf } from '../gitops/routing/kind.js';
import { sortProblems, validateManifests } from '../gitops/validate/validate.js';
import { KINDS } from '../runtime/kinds-all.js';
import { planChanges } from '../core/plan/plan.js';
import { emptySnapshot } from '../core/snapshot/snapshot.js';
import { DEFAULT_TENANT } from '../core/model/types.js';
import { describeResult, runRoutingCasesForPlan, type RoutingRun } from '../gitops/routing/run.js';
import { output } from './commands.js';
import { fromConfig, printRoutingTests, readDir } from './gitops-commands.js';
import { countProblems, locateProblems, printProblemList, problemFormat } from './problem-output.js';

type Flags = Record<string, string | boolean>;

/**
 * The routing tests of valid manifests, run on the state they would produce on an empty node
 * (offline: no geo databases, so geo-dependent cases are skipped with a note).
 */
function routingTestsOf(manifests: Parameters<typeof routingCasesOf>[0], desired: ReturnType<typeof validateManifests>['desired'], config: ReturnType<typeof fromConfig>['config']): Promise<RoutingRun> {
  const actual = emptySnapshot();
  const plan = planChanges({ desired, actual, revision: 'working-tree', tenantId: DEFAULT_TENANT, newId: (kind, key) => `new:${kind}/${key}` });
  return runRoutingCasesForPlan(routingCasesOf(manifests), actual, plan, { config });
}

/**
 * `gslbctl validate DIR [--config FILE]`: offline manifest validation, every problem on its own
 * line as `DIR/file:line:col: message (rule)` sorted by file, line and column (`--format json`: the
 * same list as JSON; `-o json`: a summary object). Valid manifests then run their RoutingTest
 * cases; a failing case is a problem (rule `routing-test`), a skipped one a note on stderr.
 * Returns 0 valid, 1 problems found. Errors: exit 2 (CliError) when DIR or the config cannot be read.
 */
export async function validateManifestDir(flags: Flags, dir: string): Promise<number> {
  problemFormat(flags); // a bad --format is a usage error before any work
  const files = readDir(flags, dir);
  const { env, config } = fromConfig(flags);
  const loaded = loadManifests(files);
  const v = validateManifests(loaded.manifests, env, KINDS);
  let problems = locateProblems(sortProblems([...loaded.problems, ...v.problems]), dir);
  const tests = problems.length ? undefined : await routingTestsOf(loaded.manifests, v.desired, config);
  if (tests?.failed) problems = locateProblems(tests.results.filter((c) => c.status === 'failed').map(describeResult), dir);
  const counts = new Map<string, number>();
  for (const d of v.desired) counts.set(d.kind, (counts.get(d.kind) ?? 0) + 1);
  if (flags.o === 'json') {
    const base = { valid: problems.length === 0, dir, problems: problems.map(formatProblem), ...(tests ? { routingTests: tests } : {}) };
    output(flags, problems.length ? base : { ...base, files: files.length, manifests: loaded.manifests.length, resources: Object.fromEntries(counts) }, () => '');
    return problems.length ? 1 : 0;
  }
  const text = problemFormat(flags) === 'text';
  if (problems.length) {
    if (tests && text) printRoutingTests(dir, tests);
    else printProblemList(flags, problems, `${dir}: invalid (${countProblems(problems)})`);
    if (tests && text) process.stderr.write(`${dir}: invalid (${tests.failed} routing test case${tests.failed === 1 ? '' : 's'} failed)\n`);
    return 1;
  }
  // manifests are counted by kind, then the resources (rows) they become: a Pool manifest is a pool,
  // its health check, its members and geo rules
  const byKind = new Map<string, number>();
  for (const m of loaded.manifests) byKind.set(m.kind, (byKind.get(m.kind) ?? 0) + 1);
  const kinds = [...byKind].map(([k, n]) => `${n} ${k}`).join(', ');
  const resources = [...counts].reduce((a, [, n]) => a + n, 0);
  const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  if (!text) printProblemList(flags, [], '');
  else {
    if (tests) printRoutingTests(dir, tests);
    const m = loaded.manifests.length;
    process.stdout.write(`${dir}: valid (${files.length} file${files.length === 1 ? '' : 's'}, ${m} manifest${m === 1 ? '' : 's'}${m ? `: ${kinds}` : ''}; `
      + `${resources} resource${resources === 1 ? '' : 's'}${resources ? `: ${summary}` : ''})\n`);
  }
  return 0;
}
