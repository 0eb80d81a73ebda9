import { readFileSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { Ajv } from 'ajv';
import { addProjectFormats, pointerToPath } from './ajv.js';
import { parseYamlDocuments, positionOf, type YamlSource } from './yaml-source.js';
import { describeSchemaError, formatValue, type Problem } from './problem.js';
import { checkConfigSemantics } from './semantic.js';
import { expandHomePaths } from './home-paths.js';
import { checkUnbuilt, checkUnbuiltEnv } from './unbuilt.js';
import { clashMessage, renamedMessage, renameOldKeys, writtenPath } from './renamed-keys.js';
import { loadDnssecKeys } from '../crypto/dnssec-keys.js';
import { loadTlsPair } from '../crypto/tls-pair.js';
import type { Config } from './types.js';
import { ValidationError } from '../errors.js';
import { loadSchema } from '../paths.js';

/** The config schema: the single source of keys, types and defaults. */
export const configSchema = loadSchema('config.v1.schema.json');

/** Default config file location (gslb-config-auth.md §1). */
export const DEFAULT_CONFIG_PATH = '/etc/gslb/config.yaml';

// verbose: errors carry the failing schema, so an unknown key can list the allowed ones
const validateConfigShape = addProjectFormats(new Ajv({ allErrors: true, useDefaults: true, strict: false, verbose: true })).compile(configSchema);

/**
 * A configuration that failed validation. `problems` are the daemon's lines (`file:line: key =
 * value: rule`, what `gslbd` prints); `located` are the same problems with column and rule id, for
 * `gslbctl validate` (runtime/config/problem.ts).
 */
export class ConfigInvalidError extends ValidationError {
  constructor(readonly located: Problem[]) {
    super(located.map((p) => `${p.file ? `${p.file}${p.line ? `:${p.line}` : ''}: ` : ''}${p.message}`));
  }
}

/** The configuration file could not be read at all (missing, a directory, no permission). */
export class ConfigUnreadableError extends ValidationError {}

function valueAt(root: unknown, path: (string | number)[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

function locate(src: YamlSource | undefined, path: (string | number)[], value: unknown, text: string, rule: string, at: 'key' | 'value' = 'value'): Problem {
  const key = path.length ? path.join('.') : '(root)';
  const pos = src ? positionOf(src, path, at) : undefined;
  return { file: src?.file ?? '', line: pos?.line ?? 0, col: pos?.col ?? 0, message: `${key} = ${formatValue(value)}: ${text}`, rule };
}

/** The warnings of each loaded config (deprecated keys it used), kept beside it so Config stays the schema's shape. */
const WARNINGS = new WeakMap<Config, readonly Problem[]>();

/**
 * The warnings found when `cfg` was loaded: each deprecated key it used, with its place and rule
 * `deprecated-key` (docs/cli.md). The daemon logs them once at start; `gslbctl validate --config`
 * prints them. Empty for a config not made by this module.
 */
export function configWarnings(cfg: Config): readonly Problem[] {
  return WARNINGS.get(cfg) ?? [];
}

/** A finding about a key itself (no value), placed at the key. */
function atKey(src: YamlSource | undefined, path: (string | number)[], message: string, rule: string): Problem {
  const pos = src ? positionOf(src, path, 'key') : undefined;
  return { file: src?.file ?? '', line: pos?.line ?? 0, col: pos?.col ?? 0, message, rule };
}

/** Most DNS worker threads `dns.workers: auto` starts (docs/dns.md "Workers"). */
export const AUTO_WORKERS_CAP = 8;

/** `dns.workers: auto`: one DNS worker thread per core this process may use (its affinity mask), at least 1, at most AUTO_WORKERS_CAP. */
export function autoDnsWorkers(): number {
  return Math.max(1, Math.min(availableParallelism(), AUTO_WORKERS_CAP));
}

/** `forms.render.workers: auto`: one render thread per core this process may use but one (the main thread's), at least 1. */
export function autoRenderWorkers(): number {
  return Math.max(1, availableParallelism() - 1);
}

/**
 * Validates a parsed config object: schema (with defaults filled in, in place) then semantic rules.
 * Throws ConfigInvalidError (a ValidationError) listing every problem with key path, value and rule,
 * in file order.
 */
export function validateConfigObject(raw: unknown, src?: YamlSource): Config {
  const obj = (raw ?? {}) as Record<string, unknown>;
  const problems: Problem[] = [];
  if (typeof obj !== 'object' || Array.isArray(obj)) {
    throw new ConfigInvalidError([{ file: src?.file ?? '', line: 0, col: 0, message: '(root): the configuration must be a YAML mapping', rule: 'document-shape' }]);
  }
  // renamed keys are read by their new name; problems under one name the key as the file wrote it
  const renamed = renameOldKeys(obj);
  const written = (path: (string | number)[]) => writtenPath(path, renamed.used);
  for (const r of renamed.clashes) problems.push(atKey(src, r.from, clashMessage(r), 'deprecated-key'));
  const original = structuredClone(obj);
  const shapeOk = validateConfigShape(obj);
  for (const e of shapeOk ? [] : validateConfigShape.errors ?? []) {
    const path = pointerToPath(e.instancePath);
    if (e.keyword === 'additionalProperties') path.push((e.params as { additionalProperty: string }).additionalProperty);
    const d = describeSchemaError(e);
    problems.push(locate(src, written(path), valueAt(original, path), d.text, d.rule, d.at));
  }
  expandHomePaths(obj);
  const cfg = obj as unknown as Config; // reason: checked against schemas/config.v1.schema.json above; problems are reported below
  if (!cfg.node?.id && cfg.node) cfg.node.id = hostname();
  if (shapeOk && (cfg.dns.workers as number | 'auto') === 'auto') cfg.dns.workers = autoDnsWorkers();
  if (shapeOk && (cfg.forms.render.workers as number | 'auto') === 'auto') cfg.forms.render.workers = autoRenderWorkers();
  let semantic: ReturnType<typeof checkConfigSemantics> = [];
  try {
    semantic = checkConfigSemantics(cfg);
  } catch {
    // A value of the wrong shape already produced a schema problem above; the semantic rules that
    // depend on it cannot run, and the other problems are still reported.
  }
  for (const p of semantic) problems.push(locate(src, written(p.path), p.value, p.rule, 'semantic'));
  // DNSSEC key files are read when signing is on: a key the daemon cannot use stops startup here,
  // at the line of the key (docs/dns.md "DNSSEC"); problems name files and tags, never key material.
  if (shapeOk && cfg.dns.dnssec.enabled) {
    for (const p of loadDnssecKeys(cfg.dns.dnssec).problems) problems.push(locate(src, p.path, p.value, p.rule, 'dnssec-key'));
  }
  // The DNS-over-TLS certificate and key are read too: a pair the listener could not use stops
  // startup here, naming the key (docs/dns.md "Zone transfers over TLS").
  if (shapeOk && cfg.dns.tls) {
    for (const p of loadTlsPair(cfg.dns.tls, ['dns', 'tls']).problems) problems.push(locate(src, p.path, p.value, p.rule, 'tls-file'));
  }
  // keys of features that are not built yet stop startup instead of silently doing nothing
  for (const p of checkUnbuilt(cfg)) problems.push(locate(src, p.path, p.value, p.rule, 'unbuilt-feature'));
  // file order, like a compiler (the schema reports in schema order); sort is stable
  problems.sort((a, b) => a.line - b.line || a.col - b.col);
  if (problems.length) throw new ConfigInvalidError(problems);
  WARNINGS.set(cfg, renamed.used.map((r) => atKey(src, r.from, renamedMessage(r), 'deprecated-key')));
  return cfg;
}

/** Applies environment overrides that win over the file (GSLB_LICENSE_SECRET, GSLB_LICENSE_KEY). */
export function applyEnvOverrides(cfg: Config, env: NodeJS.ProcessEnv = process.env): Config {
  if (env.GSLB_LICENSE_SECRET) cfg.license.secret = env.GSLB_LICENSE_SECRET;
  if (env.GSLB_LICENSE_KEY) cfg.license.licenseKey = env.GSLB_LICENSE_KEY;
  return cfg;
}

/**
 * Parses and validates YAML text. Throws ConfigInvalidError with every problem; a YAML syntax error
 * is reported once (the first), as nothing after it can be trusted.
 */
export function parseConfigText(text: string, file = 'config.yaml'): Config {
  const { docs, syntax } = parseYamlDocuments(text, file);
  const first = [...syntax].sort((a, b) => a.line - b.line || a.col - b.col)[0];
  if (first) throw new ConfigInvalidError([{ file, line: first.line, col: first.col, message: `YAML syntax error: ${first.message}`, rule: 'yaml-syntax' }]);
  if (docs.length > 1) {
    const second = positionOf(docs[1]!, []);
    throw new ConfigInvalidError([{ file, line: second?.line ?? 0, col: second?.col ?? 0, message: `expected one YAML document, found ${docs.length}`, rule: 'document-shape' }]);
  }
  return validateConfigObject(docs[0]?.value ?? {}, docs[0]);
}

/**
 * Reads, parses and validates a config file, then applies env overrides. Errors: ConfigUnreadableError
 * when the file cannot be read, ConfigInvalidError when it is not a valid configuration.
 */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigUnreadableError([`${file}: cannot read the configuration file (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
  }
  // An environment variable that sets an unbuilt key is a problem too, listed after the file's.
  const fromEnv = checkUnbuiltEnv(env);
  let cfg: Config;
  try {
    cfg = parseConfigText(text, file);
  } catch (err) {
    if (fromEnv.length === 0 || !(err instanceof ConfigInvalidError)) throw err;
    throw new ConfigInvalidError([...err.located, ...fromEnv.map((message) => ({ file: '', line: 0, col: 0, message, rule: 'unbuilt-feature' }))]);
  }
  if (fromEnv.length) throw new ConfigInvalidError(fromEnv.map((message) => ({ file: '', line: 0, col: 0, message, rule: 'unbuilt-feature' })));
  return applyEnvOverrides(cfg, env);
}
