/** A gslbctl subcommand. `run` returns the exit code. */
export interface CliCommand {
  usage: string;
  summary: string;
  values: string[];
  booleans: string[];
  aliases?: Record<string, string>;
  run: (flags: Record<string, string | boolean>, args: string[]) => Promise<number>;
}

/** The command table; each command file adds itself. */
export const COMMANDS: Record<string, CliCommand> = {};

/** Writes `data` as indented JSON when `-o json`, else the human text. */
export function output(flags: Record<string, string | boolean>, data: unknown, human: () => string): void {
  if (flags.o === 'json') process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  else process.stdout.write(`${human()}\n`);
}
