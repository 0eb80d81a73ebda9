import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createAjv, describeAjvError, pointerToPath } from './ajv.js';
import { parseYamlDocuments, lineOf, type YamlSource } from './yaml-source.js';
import { checkConfigSemantics } from './semantic.js';
import type { Config } from './types.js';
import { ValidationError } from '../errors.js';
import { loadSchema } from '../paths.js';

/** The config schema: the single source of keys, types and defaults. */
export const configSchema = loadSchema('config.v1.schema.json');

/** Default config file location (gslb-config-auth.md §1). */
export const DEFAULT_CONFIG_PATH = '/etc/gslb/config.yaml';

const validateConfigShape = createAjv({ useDefaults: true }).compile(configSchema);

function formatValue(v: unknown): string {
  if (v === undefined) return '(unset)';
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function valueAt(root: unknown, path: (string | number)[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

function render(src: YamlSource | undefined, path: (string | number)[], value: unknown, rule: string): string {
  const key = path.length ? path.join('.') : '(root)';
  const line = src ? lineOf(src, path) : undefined;
  const where = src ? `${src.file}${line ? `:${line}` : ''}: ` : '';
  return `${where}${key} = ${formatValue(value)}: ${rule}`;
}

/**
 * Validates a parsed config object: schema (with defaults filled in, in place) then semantic rules.
 * Throws ValidationError listing every problem with key path, value and rule.
 */
export function validateConfigObject(raw: unknown, src?: YamlSource): Config {
  const obj = (raw ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof obj !== 'object' || Array.isArray(obj)) throw new ValidationError(['(root): the configuration must be a YAML mapping']);
  const original = structuredClone(obj);
  const shapeOk = validateConfigShape(obj);
  for (const e of shapeOk ? [] : validateConfigShape.errors ?? []) {
    const path = pointerToPath(e.instancePath);
    if (e.keyword === 'additionalProperties') path.push((e.params as { additionalProperty: string }).additionalProperty);
    problems.push(render(src, path, valueAt(original, path), describeAjvError(e)));
  }
  const cfg = obj as unknown as Config;
  if (!cfg.node?.id && cfg.node) cfg.node.id = hostname();
  let semantic: ReturnType<typeof checkConfigSemantics> = [];
  try {
    semantic = checkConfigSemantics(cfg);
  } catch {
    // A value of the wrong shape already produced a schema problem above; the semantic rules that
    // depend on it cannot run, and the other problems are still reported.
  }
  for (const p of semantic) problems.push(render(src, p.path, p.value, p.rule));
  if (problems.length) throw new ValidationError(problems);
  return cfg;
}

/** Applies environment overrides that win over the file (GSLB_LICENSE_SECRET, GSLB_LICENSE_KEY). */
export function applyEnvOverrides(cfg: Config, env: NodeJS.ProcessEnv = process.env): Config {
  if (env.GSLB_LICENSE_SECRET) cfg.license.secret = env.GSLB_LICENSE_SECRET;
  if (env.GSLB_LICENSE_KEY) cfg.license.licenseKey = env.GSLB_LICENSE_KEY;
  return cfg;
}

/** Parses and validates YAML text. Throws ValidationError with every problem. */
export function parseConfigText(text: string, file = 'config.yaml'): Config {
  const { docs, errors } = parseYamlDocuments(text, file);
  if (errors.length) throw new ValidationError(errors);
  if (docs.length > 1) throw new ValidationError([`${file}: expected one YAML document, found ${docs.length}`]);
  return validateConfigObject(docs[0]?.value ?? {}, docs[0]);
}

/** Reads, parses and validates a config file, then applies env overrides. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ValidationError([`${file}: cannot read the configuration file (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
  }
  return applyEnvOverrides(parseConfigText(text, file), env);
}
