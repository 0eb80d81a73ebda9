import { pathToFileURL } from 'node:url';
import { parseArgs } from '../../runtime/args.js';
import { COMMANDS, type CliCommand } from './commands.js';
import './commands-all.js';

function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  ${c.usage.padEnd(44)} ${c.summary}`);
  return `usage: gslbctl <command> [flags]\n\ncommands:\n${lines.join('\n')}\n\nglobal flags: -o json (machine output), --help`;
}

/**
 * The `gslbctl` entry point. Exit codes: 0 success, 1 a negative answer (differences found,
 * validation failed), 2 usage errors or failures, like kubectl.
 */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name ? 0 : 2;
  }
  const cmd: CliCommand | undefined = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`gslbctl: unknown command "${name}"\n${usage()}\n`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs(rest, { values: ['o', 'output', ...cmd.values], booleans: ['help', ...cmd.booleans], aliases: { output: 'o', ...cmd.aliases } });
  } catch (err) {
    process.stderr.write(`gslbctl ${name}: ${(err as Error).message}\nusage: gslbctl ${cmd.usage}\n`);
    return 2;
  }
  if (parsed.flags.help) { process.stdout.write(`usage: gslbctl ${cmd.usage}\n  ${cmd.summary}\n`); return 0; }
  try {
    return await cmd.run(parsed.flags, parsed.positional);
  } catch (err) {
    process.stderr.write(`gslbctl ${name}: ${(err as Error).message}\n`);
    return 2;
  }
}

// Run directly (`node --import tsx controller/cli/main.ts …`): bin/gslbctl.mjs imports main() instead.
const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isEntry) void main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
