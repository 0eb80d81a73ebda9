import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG_PATH } from './config/load.js';
import { PACKAGE_ROOT } from './paths.js';

/** One `gslbd` command-line flag: its name, Go-style aliases, its value (none: boolean) and help. */
export interface CliFlag {
  name: string;
  /** other spellings, without dashes (`c` for `-c`) */
  aliases?: readonly string[];
  /** placeholder of the value in the help (`FILE`); absent for boolean flags */
  value?: string;
  summary: string;
}

/**
 * Every `gslbd` flag, in help order. The one table that the parser, `--help` and the docs follow:
 * a new flag is a row here plus its behaviour in runtime/main.ts.
 */
export const GSLBD_FLAGS: readonly CliFlag[] = [
  { name: 'config', aliases: ['c'], value: 'FILE', summary: `configuration file (default ${DEFAULT_CONFIG_PATH}); -config FILE works too` },
  { name: 'create-admin', summary: 'prompt for an e-mail and a password, create the first tenant_admin, and exit' },
  { name: 'demo', summary: 'start two loopback demo backends (docs/demo.md)' },
  { name: 'demo-backends', value: 'LIST', summary: 'the demo backends as IP:port,IP:port (default 127.0.0.10:8081,127.0.0.11:8081); implies --demo' },
  { name: 'version', aliases: ['v'], summary: 'print the gslbd and Node.js versions and exit' },
  { name: 'help', aliases: ['h'], summary: 'show this help and exit' },
];

/** The GSLBD_FLAGS table in the shape runtime/args.ts parseArgs takes. */
export function gslbdArgSpec(): { values: string[]; booleans: string[]; aliases: Record<string, string> } {
  const aliases: Record<string, string> = {};
  for (const f of GSLBD_FLAGS) for (const a of f.aliases ?? []) aliases[a] = f.name;
  return {
    values: GSLBD_FLAGS.filter((f) => f.value).map((f) => f.name),
    booleans: GSLBD_FLAGS.filter((f) => !f.value).map((f) => f.name),
    aliases,
  };
}

/** The `gslbd --help` text: a usage line, then one line per flag with its aliases. */
export function gslbdUsage(): string {
  const rows = GSLBD_FLAGS.map((f) => {
    const names = [f.name, ...(f.aliases ?? [])].map((n) => (n.length === 1 ? `-${n}` : `--${n}`)).join(', ');
    return [f.value ? `${names} ${f.value}` : names, f.summary] as const;
  });
  const width = Math.max(...rows.map(([l]) => l.length));
  return [
    'usage: gslbd [flags]',
    '',
    'flags:',
    ...rows.map(([l, s]) => `  ${l.padEnd(width)}   ${s}`),
    '',
    'environment: GSLB_API_KEY (unset: dev mode), GSLB_SECRET_KEY, GSLB_AUDIT_LOG, GSLB_LICENSE_SECRET, GSLB_LICENSE_KEY',
    'exit codes: 0 ok (one-shot commands), 1 startup failed (bad configuration included), 2 usage error',
  ].join('\n');
}

/** The package version from package.json (`0.0.0` if unreadable, which only a broken install is). */
export function packageVersion(): string {
  try {
    return String((JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown }).version ?? '0.0.0');
  } catch {
    return '0.0.0';
  }
}

/** The `--version` line of both binaries: `<name> <package version> (node <version>)`. */
export function versionLine(name: 'gslbd' | 'gslbctl'): string {
  return `${name} ${packageVersion()} (node ${process.versions.node})`;
}
