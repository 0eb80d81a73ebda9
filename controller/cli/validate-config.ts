import { loadConfig, DEFAULT_CONFIG_PATH } from '../../runtime/config/load.js';
import { ValidationError } from '../../runtime/errors.js';
import { COMMANDS, output } from './commands.js';

/**
 * `gslbctl validate --config FILE`: the daemon's startup checks without starting. Exit 0 valid,
 * 1 invalid (every problem listed). With a directory argument, the GitOps manifest validator runs
 * instead (see validate-manifests).
 */
COMMANDS.validate = {
  usage: 'validate [--config FILE] [DIR]',
  summary: 'check a config file (or a manifest directory) without starting',
  values: ['config'],
  booleans: [],
  aliases: { c: 'config' },
  async run(flags, args) {
    if (args.length > 0 && VALIDATE_DIR.run) return VALIDATE_DIR.run(flags, args);
    const file = typeof flags.config === 'string' ? flags.config : DEFAULT_CONFIG_PATH;
    try {
      loadConfig(file);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      output(flags, { valid: false, file, problems: err.problems }, () => `${file}: invalid\n  - ${err.problems.join('\n  - ')}`);
      return 1;
    }
    output(flags, { valid: true, file, problems: [] }, () => `${file}: valid`);
    return 0;
  },
};

/** Set by the manifest validator so `validate DIR` checks a manifest directory. */
export const VALIDATE_DIR: { run?: (flags: Record<string, string | boolean>, args: string[]) => Promise<number> } = {};
