import { ConfigInvalidError, ConfigUnreadableError, configWarnings, loadConfig, DEFAULT_CONFIG_PATH } from '../runtime/config/load.js';
import { compareProblems, formatProblem, type Problem } from '../runtime/config/problem.js';
import { ValidationError } from '../runtime/errors.js';
import { COMMANDS, output } from './commands.js';
import { EXIT, inputError } from './exit-codes.js';
import { countProblems, printProblemList, problemFormat } from './problem-output.js';
import { validateManifestDir } from './validate-manifests.js';

type Flags = Record<string, string | boolean>;

/**
 * `gslbctl validate --config FILE`: the daemon's startup checks without starting, every problem as
 * `FILE:line:col: key = value: rule (rule-id)` in file order (`--format json`: the same list as
 * JSON; `-o json`: `{valid, file, problems, warnings}` with the daemon's own lines). Warnings of a
 * valid file (deprecated keys) go to stderr as `warning: FILE:line:col: …` (and into `warnings`
 * with `-o json`); they do not make it invalid. Returns 0 valid, 1 invalid. Errors: exit 2 when
 * the file cannot be read.
 */
async function validateConfigFile(flags: Flags, file: string): Promise<number> {
  problemFormat(flags);
  let located: Problem[];
  let lines: string[];
  let warnings: string[] = [];
  try {
    warnings = configWarnings(loadConfig(file)).map((w) => formatProblem({ ...w, file: w.file || file }));
    located = [];
    lines = [];
  } catch (err) {
    if (err instanceof ConfigUnreadableError) throw inputError(err.problems.join('; '));
    if (!(err instanceof ValidationError)) throw err;
    // problems without a place (a mapping expected, …) still name the file
    located = err instanceof ConfigInvalidError
      ? err.located.map((p) => ({ ...p, file: p.file || file })).sort(compareProblems)
      : err.problems.map((message) => ({ file, line: 0, col: 0, message, rule: '' }));
    lines = err.problems;
  }
  if (flags.o === 'json') {
    output(flags, { valid: located.length === 0, file, problems: lines, warnings }, () => '');
  } else if (located.length || problemFormat(flags) === 'json') {
    printProblemList(flags, located, `${file}: invalid (${countProblems(located)})`);
  } else {
    process.stdout.write(`${file}: valid\n`);
  }
  if (flags.o !== 'json') for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  return located.length ? EXIT.FINDINGS : EXIT.OK;
}

COMMANDS.validate = {
  usage: 'validate [--config FILE] [DIR] [--format text|json]',
  summary: 'check a config file, or a manifest directory (with --config: against that daemon config), without starting (exit 0 valid, 1 problems)',
  values: ['config', 'format'],
  booleans: [],
  aliases: { c: 'config' },
  async run(flags, args) {
    if (args.length > 1) throw inputError(`one directory at a time (got ${args.length})`);
    if (args[0] !== undefined) return validateManifestDir(flags, args[0]);
    return validateConfigFile(flags, typeof flags.config === 'string' ? flags.config : DEFAULT_CONFIG_PATH);
  },
};
