import { loadConfig, DEFAULT_CONFIG_PATH } from './config/load.js';
import { ValidationError, GslbError } from './errors.js';
import { startDaemon } from './daemon.js';
import { logStopReport } from './shutdown.js';
import { parseArgs } from './args.js';
import './parts-all.js';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { listenErrorLine } from './listen-error.js';
import { createAdminCommand } from './auth/create-admin.js';
import { gslbdArgSpec, gslbdUsage, versionLine } from './cli-flags.js';
import { DEFAULT_DEMO_BACKENDS, parseDemoBackends, type DemoOptions } from './demo/options.js';

/** Hooks that other parts add for one-shot commands (e.g. --create-admin). Returns an exit code or undefined. */
export const COMMANDS: ((flags: Record<string, string | boolean>, configPath: string) => Promise<number | undefined>)[] = [createAdminCommand];

/** The `gslbd` entry point. Returns the exit code for one-shot commands; keeps running otherwise. */
export async function main(argv: string[]): Promise<number | undefined> {
  let flags: Record<string, string | boolean>;
  let demo: DemoOptions | undefined;
  try {
    ({ flags } = parseArgs(argv, gslbdArgSpec()));
    const backends = typeof flags['demo-backends'] === 'string' ? flags['demo-backends'] : flags.demo === true ? DEFAULT_DEMO_BACKENDS : undefined;
    if (backends !== undefined) demo = { backends: parseDemoBackends(backends) };
  } catch (err) {
    process.stderr.write(`gslbd: ${(err as Error).message}\n${gslbdUsage()}\n`);
    return 2;
  }
  if (flags.help) { process.stdout.write(`${gslbdUsage()}\n`); return 0; }
  if (flags.version) { process.stdout.write(`${versionLine('gslbd')}\n`); return 0; }
  const configPath = typeof flags.config === 'string' ? flags.config : DEFAULT_CONFIG_PATH;
  for (const cmd of COMMANDS) {
    const code = await cmd(flags, configPath);
    if (code !== undefined) return code;
  }
  if (typeof flags.config !== 'string' && !existsSync(configPath)) {
    process.stderr.write(`gslbd: no configuration file: ${configPath} does not exist. Give one with --config FILE `
      + `(examples/config.yaml is the quick start's; every key: schemas/config.v1.schema.json), or see gslbd --help\n`);
    return 1;
  }
  let daemon;
  let config;
  try {
    config = loadConfig(configPath);
    daemon = await startDaemon(config, { ports: demo ? { demo } : {} });
  } catch (err) {
    const listen = config ? listenErrorLine(err, config) : undefined;
    if (listen) process.stderr.write(`gslbd: ${listen}\n`);
    else if (err instanceof ValidationError || err instanceof GslbError) process.stderr.write(`gslbd: ${err.message}\n`);
    else process.stderr.write(`gslbd: startup failed: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
  const d = daemon;
  // every part stops within its bound (runtime/shutdown.ts); the process exits whatever is left
  const stop = async (signal: string) => {
    d.core.log.info({ signal }, 'shutting down');
    const clean = logStopReport(d.core.log, await d.close());
    process.exit(clean ? 0 : 1);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  return undefined;
}

// Run directly (`node --import tsx runtime/main.ts …`): bin/gslbd.mjs imports main() instead.
const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isEntry) void main(process.argv.slice(2)).then((code) => { if (typeof code === 'number') process.exitCode = code; });
