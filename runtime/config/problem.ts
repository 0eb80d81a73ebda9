import type { ErrorObject } from 'ajv';
import { describeAjvError } from './ajv.js';

/**
 * One validation finding, compiler style: where (`file`, 1-based `line` and `col`; 0 when the
 * place is unknown), what (`message`, usually `key.path = value: what is wrong`) and which `rule`
 * (a short kebab-case id, listed in docs/cli.md).
 */
export interface Problem { file: string; line: number; col: number; message: string; rule: string }

/** `file:line:col: message (rule)`; without a known place `file: message (rule)`. */
export function formatProblem(p: Problem): string {
  const where = p.line > 0 ? `${p.file}:${p.line}:${p.col > 0 ? p.col : 1}` : p.file;
  const rule = p.rule ? ` (${p.rule})` : '';
  return where ? `${where}: ${p.message}${rule}` : `${p.message}${rule}`;
}

const LINE = /^(.+?):(\d+)(?::(\d+))?: (.*?)(?: \(([a-z0-9][a-z0-9-]*)\))?$/s;
const FILE_ONLY = /^([^\s:]+\.ya?ml): (.*?)(?: \(([a-z0-9][a-z0-9-]*)\))?$/s;

/**
 * The inverse of formatProblem, for problems that travel as strings (status, the plan API). Also
 * reads the older `file:line: message` form (column 0, no rule). Anything else becomes a problem
 * with an empty file and the whole text as message.
 */
export function parseProblem(text: string): Problem {
  const m = LINE.exec(text);
  if (m) return { file: m[1]!, line: Number(m[2]), col: m[3] ? Number(m[3]) : 0, message: m[4]!, rule: m[5] ?? '' };
  const f = FILE_ONLY.exec(text);
  if (f) return { file: f[1]!, line: 0, col: 0, message: f[2]!, rule: f[3] ?? '' };
  return { file: '', line: 0, col: 0, message: text, rule: '' };
}

/** Orders problems by file, then line, then column; equal places keep their order (sort is stable). */
export function compareProblems(a: Problem, b: Problem): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return a.line - b.line || a.col - b.col;
}

/** Sorts formatted problem strings in place by file, line and column; returns the same array. */
export function sortProblemStrings(problems: string[]): string[] {
  const keyed = problems.map((text) => ({ text, p: parseProblem(text) }));
  keyed.sort((x, y) => compareProblems(x.p, y.p));
  keyed.forEach((k, i) => { problems[i] = k.text; });
  return problems;
}

/** A value as problems quote it: JSON, cut at 60 characters; `(unset)` for undefined. */
export function formatValue(v: unknown): string {
  if (v === undefined) return '(unset)';
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** How one schema error reads: the text after `key = value: `, its rule id and where it points. */
export interface SchemaErrorText {
  text: string;
  rule: string;
  /** `= value` adds nothing: the text quotes the value (const), or the value is the whole parent object (required) */
  omitValue: boolean;
  /** an unknown key is pointed at by its key, other errors by their value */
  at: 'key' | 'value';
}

const RULE_BY_KEYWORD: Record<string, string> = {
  additionalProperties: 'unknown-field', required: 'required-field', enum: 'enum', const: 'const', type: 'type',
  format: 'format', pattern: 'pattern', minimum: 'range', maximum: 'range', exclusiveMinimum: 'range',
  exclusiveMaximum: 'range', minLength: 'length', maxLength: 'length', minItems: 'length', maxItems: 'length',
  uniqueItems: 'unique-items',
};

/**
 * Describes an ajv error (from an instance created with `verbose: true`, so the failing schema and
 * value are at hand) naming the expected value whenever the schema knows it: a `const` says
 * `expected "gslb/v1", got "gslb/v2"`, an unknown key lists the allowed keys, an enum its values.
 */
export function describeSchemaError(e: ErrorObject): SchemaErrorText {
  const rule = RULE_BY_KEYWORD[e.keyword] ?? 'schema';
  const parent = (e.parentSchema ?? {}) as { properties?: Record<string, unknown>; description?: string };
  switch (e.keyword) {
    case 'const':
      return { text: `expected ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}, got ${formatValue(e.data)}`, rule, omitValue: true, at: 'value' };
    case 'required':
      return { text: describeAjvError(e), rule, omitValue: true, at: 'value' };
    case 'additionalProperties': {
      // keys the schema accepts only to ignore them (read-only fields of REST bodies) are not offered
      const allowed = Object.entries(parent.properties ?? {})
        .filter(([, sub]) => !/^read-only/i.test(String((sub as { description?: unknown } | null)?.description ?? '')))
        .map(([k]) => k);
      const base = describeAjvError(e);
      return { text: allowed.length ? `${base}; allowed keys: ${allowed.join(', ')}` : base, rule, omitValue: false, at: 'key' };
    }
    case 'pattern':
      return { text: parent.description ? `${describeAjvError(e)} (${parent.description})` : describeAjvError(e), rule, omitValue: false, at: 'value' };
    default:
      return { text: describeAjvError(e), rule, omitValue: false, at: 'value' };
  }
}
