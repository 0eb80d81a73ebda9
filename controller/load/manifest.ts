import { lineOf, parseYamlDocuments, type YamlSource } from '../../runtime/config/yaml-source.js';
import type { SourceFile } from '../source/git-source.js';

/** One document of the config repo, with where it came from. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  name: string;
  spec: Record<string, unknown>;
  /** the whole document as parsed */
  raw: Record<string, unknown>;
  file: string;
  src: YamlSource;
}

/** A problem in the manifests: `file:line: path = value: rule`. */
export type Problems = string[];

function formatValue(v: unknown): string {
  if (v === undefined) return '(unset)';
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** The value at `path` in a document. */
export function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/** Renders a problem at a path of a document: `file:line: spec.members.1.port = 70000: rule`. */
export function problemAt(src: YamlSource, path: (string | number)[], rule: string, value: unknown = valueAt(src.value, path)): string {
  const line = lineOf(src, path);
  const key = path.length ? path.join('.') : '(document)';
  return `${src.file}${line ? `:${line}` : ''}: ${key} = ${formatValue(value)}: ${rule}`;
}

/** Parsed files by `path` and blob id, reused across commits (YAML parsing dominates large loads). */
export type ParseCache = Map<string, ReturnType<typeof parseYamlDocuments>>;

/** The ParseCache key of a file read from git. */
export const parseCacheKey = (path: string, oid: string) => `${path}\u0000${oid}`;

/**
 * Parses every file into manifest documents. YAML syntax errors come back as `file:line` problems
 * (all of them, not the first); documents that are not mappings are problems too. Envelope fields
 * are read loosely here; the envelope schema checks them in validation. With `cache`, files whose
 * blob id was parsed before are not parsed again, and `cache` is left holding exactly this set's
 * files. Pure apart from the cache.
 */
export function loadManifests(files: readonly SourceFile[], cache?: ParseCache): { manifests: Manifest[]; problems: Problems } {
  const manifests: Manifest[] = [];
  const problems: Problems = [];
  const next: ParseCache = new Map();
  for (const f of files) {
    const key = f.oid ? parseCacheKey(f.path, f.oid) : undefined;
    const parsed = (key && cache?.get(key)) || parseYamlDocuments(f.text, f.path);
    if (key) next.set(key, parsed);
    const { docs, errors } = parsed;
    problems.push(...errors);
    for (const src of docs) {
      const v = src.value;
      if (v === null || v === undefined) continue;
      if (typeof v !== 'object' || Array.isArray(v)) {
        problems.push(`${f.path}:${lineOf(src, []) ?? 1}: (document): a manifest must be a mapping with apiVersion, kind, metadata and spec`);
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
