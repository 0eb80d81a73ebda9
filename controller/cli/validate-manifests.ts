import { formatProblem } from '../../runtime/config/problem.js';
import { loadManifests } from '../load/index.js';
import { sortProblems, validateManifests } from '../validate/validate.js';
import { output } from './commands.js';
import { fromConfig, readDir } from './gitops-commands.js';
import { countProblems, locateProblems, printProblemList, problemFormat } from './problem-output.js';

type Flags = Record<string, string | boolean>;

/**
 * `gslbctl validate DIR [--config FILE]`: offline manifest validation, every problem on its own
 * line as `DIR/file:line:col: message (rule)` sorted by file, line and column (`--format json`: the
 * same list as JSON; `-o json`: a summary object). Returns 0 valid, 1 problems found. Errors: exit
 * 2 (CliError) when DIR or the config cannot be read.
 */
export async function validateManifestDir(flags: Flags, dir: string): Promise<number> {
  problemFormat(flags); // a bad --format is a usage error before any work
  const files = readDir(flags, dir);
  const { env } = fromConfig(flags);
  const loaded = loadManifests(files);
  const v = validateManifests(loaded.manifests, env);
  const problems = locateProblems(sortProblems([...loaded.problems, ...v.problems]), dir);
  const counts = new Map<string, number>();
  for (const d of v.desired) counts.set(d.kind, (counts.get(d.kind) ?? 0) + 1);
  if (flags.o === 'json') {
    const base = { valid: problems.length === 0, dir, problems: problems.map(formatProblem) };
    output(flags, problems.length ? base : { ...base, files: files.length, manifests: loaded.manifests.length, resources: Object.fromEntries(counts) }, () => '');
    return problems.length ? 1 : 0;
  }
  if (problems.length) {
    printProblemList(flags, problems, `${dir}: invalid (${countProblems(problems)})`);
    return 1;
  }
  const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  if (problemFormat(flags) === 'json') printProblemList(flags, [], '');
  else process.stdout.write(`${dir}: valid (${files.length} files, ${loaded.manifests.length} manifests: ${summary || 'no resources'})\n`);
  return 0;
}
