import { compareProblems, formatProblem, parseProblem, type Problem } from '../runtime/config/problem.js';
import { inputError } from './exit-codes.js';

type Flags = Record<string, string | boolean>;

/**
 * Problem strings (`file:line:col: message (rule)`, paths relative to a manifest folder) as
 * located problems whose paths start with `dir` (as the user typed it), so each line can be opened
 * from where gslbctl ran. Sorted by file, line and column.
 */
export function locateProblems(problems: readonly string[], dir?: string): Problem[] {
  const base = dir === undefined ? '' : dir.replace(/\/+$/, '');
  return problems.map((text) => {
    const p = parseProblem(text);
    if (base && p.file && p.file !== '(unknown file)') p.file = `${base}/${p.file}`;
    return p;
  }).sort(compareProblems);
}

/** The output format of a problem list: `--format text` (default) or `--format json`. Errors: exit 2 for another value. */
export function problemFormat(flags: Flags): 'text' | 'json' {
  const f = flags.format ?? 'text';
  if (f !== 'text' && f !== 'json') throw inputError(`--format ${String(f)}: must be text or json`);
  return f;
}

/**
 * Prints problems compiler style: with `--format json` one JSON array `[{file, line, col, message,
 * rule}]` on stdout (empty when there are none); otherwise one `file:line:col: message (rule)` line
 * each on stdout and the `summary` on stderr.
 */
export function printProblemList(flags: Flags, problems: readonly Problem[], summary: string): void {
  if (problemFormat(flags) === 'json') {
    process.stdout.write(`${JSON.stringify(problems.map(({ file, line, col, message, rule }) => ({ file, line, col, message, rule })), null, 2)}\n`);
    return;
  }
  if (problems.length) process.stdout.write(`${problems.map(formatProblem).join('\n')}\n`);
  process.stderr.write(`${summary}\n`);
}

/** `N problem(s) in M file(s)`. */
export function countProblems(problems: readonly Problem[]): string {
  const files = new Set(problems.map((p) => p.file)).size;
  return `${problems.length} problem${problems.length === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}`;
}
