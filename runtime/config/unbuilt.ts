import type { Config } from './types.js';

/**
 * Config keys of features that do not exist yet. The schema accepts them (they are specified), but
 * an operator who sets `bgp.enabled: true` must not believe routes are announced: until a
 * feature is built, enabling any of its keys stops startup (and `gslbctl validate --config`) with
 * a problem naming the key. Keys left at their defaults stay accepted. The row of a feature is
 * removed in the change that builds it.
 */
export interface UnbuiltKey {
  /** the key path in the file */
  path: string[];
  /** the feature, as the subject of "… not built yet" */
  feature: string;
  /** true when the key asks for the feature (the config has its defaults filled in) */
  isSet(c: Config): boolean;
  /** the value quoted in the problem, secrets left out (messages end up in logs); default the value at `path` */
  shown?(c: Config): unknown;
  /** the environment variable that also sets this key (runtime/config/load.ts applyEnvOverrides) */
  env?: string;
}

/** A key of an unbuilt feature that is set: the path, the value to quote, the rule it breaks. */
export interface UnbuiltProblem { path: string[]; value: unknown; rule: string }

const REDACTED = '[redacted]';

/**
 * One row per key (a feature with several keys has a row for each, since each may be set alone).
 * Empty: every key the schema specifies is built. The mechanism stays for the next specified key
 * that lands in the schema before its feature (tests/unit/config/unbuilt.test.ts runs it on a
 * table of its own).
 */
export const UNBUILT_KEYS: readonly UnbuiltKey[] = [];

function valueAt(c: Config, path: string[]): unknown {
  let cur: unknown = c;
  for (const seg of path) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[seg] : undefined;
  return cur;
}

/** What to do instead, by the kind of value: a switch goes off, a list empties, a string goes. */
function remedy(value: unknown): string {
  if (typeof value === 'boolean') return 'remove the key or set it to false';
  if (Array.isArray(value)) return 'remove the key or leave it empty';
  return 'remove the key';
}

/**
 * The unbuilt keys set in a config (after defaults, before environment overrides), in table order.
 * A row whose part of the config has the wrong shape is skipped: the schema reports that already.
 */
export function checkUnbuilt(c: Config, rows: readonly UnbuiltKey[] = UNBUILT_KEYS): UnbuiltProblem[] {
  const out: UnbuiltProblem[] = [];
  for (const row of rows) {
    try {
      if (!row.isSet(c)) continue;
      const value = valueAt(c, row.path);
      out.push({ path: row.path, value: row.shown ? row.shown(c) : value, rule: `${row.feature} not built yet; ${remedy(value)}` });
    } catch {
      continue;
    }
  }
  return out;
}

/**
 * The unbuilt keys set through the environment (rows with `env`), as problem lines naming the
 * variable, never its value: `GSLB_X (environment): x.key = "[redacted]": … not built yet; unset
 * GSLB_X`. An empty variable is unset. No row has one now (the license variables, the last, belong
 * to a built feature and are applied by runtime/config/load.ts applyEnvOverrides).
 */
export function checkUnbuiltEnv(env: NodeJS.ProcessEnv, rows: readonly UnbuiltKey[] = UNBUILT_KEYS): string[] {
  const out: string[] = [];
  for (const row of rows) {
    if (!row.env || !env[row.env]) continue;
    out.push(`${row.env} (environment): ${row.path.join('.')} = ${JSON.stringify(REDACTED)}: ${row.feature} not built yet; unset ${row.env}`);
  }
  return out;
}
