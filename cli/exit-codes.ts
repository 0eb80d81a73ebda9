/**
 * gslbctl exit codes, the same for every command (docs/cli.md):
 * 0 the answer is yes (valid, no changes, ready), 1 the answer is no (problems found, changes
 * found, plan held back, not ready), 2 the command could not do its job because of its input
 * (usage, a missing or unreadable path, a bad flag, a config or manifests that cannot be used,
 * an API key the daemon refuses), 3 the daemon could not be reached or failed to answer.
 */
export const EXIT = { OK: 0, FINDINGS: 1, INPUT: 2, UNREACHABLE: 3 } as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error that ends a gslbctl command with a given exit code and a one-line message. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: ExitCode) {
    super(message);
    this.name = new.target.name;
  }
}

/** A usage or input error (exit 2): a bad flag, a missing argument, a path that cannot be read. */
export const inputError = (message: string) => new CliError(message, EXIT.INPUT);

/** The daemon did not answer usefully (exit 3): connection refused, timeout, a 5xx answer. */
export const unreachable = (message: string) => new CliError(message, EXIT.UNREACHABLE);

/** The exit code for an error thrown by a command: its own code, else 2 (an input error). */
export function exitCodeOf(err: unknown): ExitCode {
  return err instanceof CliError ? err.exitCode : EXIT.INPUT;
}

/** The text of the exit-code table, for `gslbctl --help`. */
export const EXIT_CODES_HELP = [
  'exit codes:',
  '  0  ok: valid, no changes, ready',
  '  1  findings: problems found (validate), changes found (diff), plan held back (apply --dry-run), not ready (status, reconcile)',
  '  2  usage or input error: bad flags, a missing or unreadable path or config, manifests that do not validate (diff, apply), a request the daemon refuses (4xx)',
  '  3  daemon unreachable: connection failed, timed out, or answered 5xx',
].join('\n');
