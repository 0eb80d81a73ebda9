import type { Config } from './types.js';

/**
 * Config keys of features that do not exist yet. The schema accepts them (they are specified), but
 * an operator who sets `backup.enabled: true` must not believe the data is protected: until a
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
const nonEmpty = (v: unknown[] | undefined) => Array.isArray(v) && v.length > 0;
const given = (v: string | undefined) => v !== undefined && v !== '';

/** One row per key; `dns.axfr.*` and `license.*` have several because each may be set alone. */
export const UNBUILT_KEYS: readonly UnbuiltKey[] = [
  { path: ['backup', 'enabled'], feature: 'backups are', isSet: (c) => c.backup.enabled },
  { path: ['redirect', 'enabled'], feature: 'the HTTP redirect listener is', isSet: (c) => c.redirect.enabled },
  { path: ['dns', 'axfr', 'enabled'], feature: 'zone transfers (AXFR) are', isSet: (c) => c.dns.axfr.enabled },
  { path: ['dns', 'axfr', 'requireTsig'], feature: 'zone transfers (AXFR) are', isSet: (c) => c.dns.axfr.requireTsig },
  {
    path: ['dns', 'axfr', 'tsigKeys'], feature: 'zone transfers (AXFR) are', isSet: (c) => nonEmpty(c.dns.axfr.tsigKeys),
    shown: (c) => c.dns.axfr.tsigKeys.map(({ secret: _secret, ...k }) => k),
  },
  { path: ['license', 'secret'], feature: 'licensing is', isSet: (c) => given(c.license.secret), shown: () => REDACTED, env: 'GSLB_LICENSE_SECRET' },
  { path: ['license', 'licenseKey'], feature: 'licensing is', isSet: (c) => given(c.license.licenseKey), shown: () => REDACTED, env: 'GSLB_LICENSE_KEY' },
  { path: ['api', 'webuiPath'], feature: 'the web dashboard is', isSet: (c) => given(c.api.webuiPath) },
];

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
export function checkUnbuilt(c: Config): UnbuiltProblem[] {
  const out: UnbuiltProblem[] = [];
  for (const row of UNBUILT_KEYS) {
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
 * The unbuilt keys set through the environment (GSLB_LICENSE_SECRET, GSLB_LICENSE_KEY), as
 * problem lines naming the variable: `GSLB_LICENSE_KEY (environment): license.licenseKey =
 * "[redacted]": licensing is not built yet; unset GSLB_LICENSE_KEY`. An empty variable is unset.
 */
export function checkUnbuiltEnv(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const row of UNBUILT_KEYS) {
    if (!row.env || !env[row.env]) continue;
    out.push(`${row.env} (environment): ${row.path.join('.')} = ${JSON.stringify(REDACTED)}: ${row.feature} not built yet; unset ${row.env}`);
  }
  return out;
}
