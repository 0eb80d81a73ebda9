import { positionOf, parseYamlDocuments, type YamlSource } from '../../runtime/config/yaml-source.js';
import { formatProblem, formatValue } from '../../runtime/config/problem.js';
import type { SourceFile } from '../source/git-source.js';
import type { Manifest } from '../../runtime/ports/kinds.js';

export type { Manifest } from '../../runtime/ports/kinds.js';


/** Problems in the manifests, each formatted `file:line:col: path = value: what (rule)` (runtime/config/problem.ts). */
export type Problems = string[];

/** The value at `path` in a document. */
export function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/** How a problem is placed and labelled beyond its text (all optional). */
export interface ProblemOptions {
  /** rule id shown in parentheses; `semantic` (a kind's own rule) when not given */
  rule?: string;
  /** point at the key of the last path segment instead of its value (unknown keys) */
  at?: 'key' | 'value';
  /** leave out `= value` (the text quotes it already) */
  omitValue?: boolean;
}

/**
 * Renders a problem at a path of a document: `file:line:col: spec.members.1.port = 70000: must be
 * <= 65535 (range)`. The place is the value's (or, with `at: 'key'`, the key's), else the nearest
 * existing parent's.
 */
export function problemAt(src: YamlSource, path: (string | number)[], rule: string, value: unknown = valueAt(src.value, path), opts: ProblemOptions = {}): string {
  const pos = positionOf(src, path, opts.at);
  const key = path.length ? path.join('.') : '(document)';
  const message = opts.omitValue ? `${key}: ${rule}` : `${key} = ${formatValue(value)}: ${rule}`;
  return formatProblem({ file: src.file, line: pos?.line ?? 0, col: pos?.col ?? 0, message, rule: opts.rule ?? 'semantic' });
}

/** Parsed files by `path` and blob id, reused across commits (YAML parsing dominates large loads). */
export type ParseCache = Map<string, ReturnType<typeof parseYamlDocuments>>;

/** The ParseCache key of a file read from git. */
export const parseCacheKey = (path: string, oid: string) => `${path}\u0000${oid}`;

/**
 * Parses every file into manifest documents. A file with a YAML syntax error yields one problem
 * (its first error) and no manifests, so nothing else is reported for that file; documents that
 * are not mappings are problems too. Envelope fields are read loosely here; the envelope schema
 * checks them in validation. With `cache`, files whose blob id was parsed before are not parsed
 * again, and `cache` is left holding exactly this set's files. Pure apart from the cache.
 */
export function loadManifests(files: readonly SourceFile[], cache?: ParseCache): { manifests: Manifest[]; problems: Problems } {
  const manifests: Manifest[] = [];
  const problems: Problems = [];
  const next: ParseCache = new Map();
  for (const f of files) {
    const key = f.oid ? parseCacheKey(f.path, f.oid) : undefined;
    const parsed = (key && cache?.get(key)) || parseYamlDocuments(f.text, f.path);
    if (key) next.set(key, parsed);
    // the earliest error; the parser's later ones on a broken file are mostly echoes of it
    const first = [...parsed.syntax].sort((a, b) => a.line - b.line || a.col - b.col)[0];
    if (first) {
      problems.push(formatProblem({ file: f.path, line: first.line, col: first.col, message: `YAML syntax error: ${first.message}`, rule: 'yaml-syntax' }));
      continue;
    }
    for (const src of parsed.docs) {
      const v = src.value;
      if (v === null || v === undefined) continue;
      if (typeof v !== 'object' || Array.isArray(v)) {
        problems.push(problemAt(src, [], 'a manifest must be a mapping with apiVersion, kind, metadata and spec', v, { rule: 'document-shape', omitValue: true }));
        continue;
      }
      const raw = v as Record<string, unknown>;
      const meta = (raw.metadata ?? {}) as Record<string, unknown>;
      manifests.push({
        apiVersion: String(raw.apiVersion ?? ''),
        kind: typeof raw.kind === 'string' ? raw.kind : '',
        name: typeof meta.name === 'string' ? meta.name : '',
        spec: (raw.spec && typeof raw.spec === 'object' && !Array.isArray(raw.spec) ? raw.spec : {}) as Record<string, unknown>,
        raw,
        file: f.path,
        src,
      });
    }
  }
  if (cache) {
    cache.clear();
    for (const [k, v] of next) cache.set(k, v);
  }
  return { manifests, problems };
}
