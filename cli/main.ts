import { pathToFileURL } from 'node:url';
import { parseArgs } from '../runtime/args.js';
import { versionLine } from '../runtime/cli-flags.js';
import { COMMANDS, type CliCommand } from './commands.js';
import { EXIT, EXIT_CODES_HELP, exitCodeOf } from './exit-codes.js';
import './commands-all.js';

function usage(): string {
  const lines = Object.values(COMMANDS).flatMap((c) => [`  ${c.usage}`, `      ${c.summary}`]);
  return [
    'usage: gslbctl <command> [flags]',
    '',
    'commands:',
    ...lines,
    '',
    'global flags: -o json (machine output), --help; gslbctl --version (or -v)',
    'environment: GSLB_SERVER (default http://127.0.0.1:8080), GSLB_API_KEY, NO_COLOR',
    '',
    EXIT_CODES_HELP,
  ].join('\n');
}

/**
 * The `gslbctl` entry point. Returns the exit code, the same scheme for every command
 * (cli/exit-codes.ts): 0 ok, 1 findings (problems, changes, not ready), 2 usage or
 * input errors, 3 daemon unreachable. Never throws.
 */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    if (name) process.stdout.write(`${usage()}\n`);
    else process.stderr.write(`${usage()}\n`);
    return name ? EXIT.OK : EXIT.INPUT;
  }
  if (name === '--version' || name === '-version' || name === '-v' || name === 'version') {
    process.stdout.write(`${versionLine('gslbctl')}\n`);
    return EXIT.OK;
  }
  const cmd: CliCommand | undefined = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`gslbctl: unknown command "${name}"\n${usage()}\n`);
    return EXIT.INPUT;
  }
  let parsed;
  try {
    parsed = parseArgs(rest, { values: ['o', 'output', ...cmd.values], booleans: ['help', ...cmd.booleans], aliases: { output: 'o', h: 'help', ...cmd.aliases } });
  } catch (err) {
    process.stderr.write(`gslbctl ${name}: ${(err as Error).message}\nusage: gslbctl ${cmd.usage}\n`);
    return EXIT.INPUT;
  }
  // a command's help names its own exit codes in its summary; the table of all of them is in `gslbctl --help`
  if (parsed.flags.help) { process.stdout.write(`usage: gslbctl ${cmd.usage}\n  ${cmd.summary}\n\nexit codes of every command: gslbctl --help\n`); return EXIT.OK; }
  const o = parsed.flags.o;
  if (o !== undefined && o !== 'json' && o !== 'text') {
    process.stderr.write(`gslbctl ${name}: -o ${String(o)}: must be json (or text, the default)\n`);
    return EXIT.INPUT;
  }
  try {
    return await cmd.run(parsed.flags, parsed.positional);
  } catch (err) {
    process.stderr.write(`gslbctl ${name}: ${(err as Error).message}\n`);
    return exitCodeOf(err);
  }
}

// Run directly (`node --import tsx cli/main.ts …`): bin/gslbctl.mjs imports main() instead.
const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isEntry) void main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
