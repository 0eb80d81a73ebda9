import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One import of a module: the resolved project file (`runtime/dns/answer.ts`) or a package name. */
export interface Edge { from: string; to: string; typeOnly: boolean }

/** What a module is, for the import rules of docs/architecture.md "Folders and import directions". */
export type Role = 'wiring' | 'routes' | 'api' | 'root' | 'logic';

const ROOTS = new Set(['runtime/parts-all.ts', 'runtime/daemon.ts', 'runtime/main.ts', 'runtime/parts.ts']);

export function roleOf(file: string): Role {
  if (ROOTS.has(file)) return 'root';
  if (file.startsWith('runtime/api/')) return 'api';
  const base = path.basename(file);
  if (base === 'part.ts') return 'wiring';
  if (base === 'routes.ts' || file.split('/').includes('routes')) return 'routes';
  return 'logic';
}

/** The feature folder a module belongs to (`runtime/dns`, `gitops`), or the file for top-level ones. */
export function featureOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'gitops' || parts[0] === 'cli') return parts[0];
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file;
}

function walk(dir: string, out: string[]): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?'([^']+)'|import\('([^']+)'\)/g;

/** Every import of every module under `dirs` (relative to `root`), resolved to project files or package names. */
export function importGraph(root: string, dirs: string[]): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>();
  for (const d of dirs) {
    for (const abs of walk(path.join(root, d), [])) {
      const file = path.relative(root, abs);
      const src = readFileSync(abs, 'utf8');
      const edges: Edge[] = [];
      for (const m of src.matchAll(IMPORT)) {
        const spec = m[3] ?? m[4];
        if (!spec) continue;
        const typeOnly = m[2] !== undefined;
        const to = spec.startsWith('.') ? path.normalize(path.join(path.dirname(file), spec)).replace(/\.js$/, '.ts') : packageOf(spec);
        edges.push({ from: file, to, typeOnly });
      }
      graph.set(file, edges);
    }
  }
  return graph;
}

function packageOf(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Modules reachable from `start` (itself included), following value and type imports alike. */
export function reachable(graph: Map<string, Edge[]>, start: string): Map<string, string[]> {
  const seen = new Map<string, string[]>([[start, [start]]]);
  const queue = [start];
  for (let cur = queue.shift(); cur !== undefined; cur = queue.shift()) {
    for (const e of graph.get(cur) ?? []) {
      if (seen.has(e.to)) continue;
      seen.set(e.to, [...seen.get(cur)!, e.to]);
      if (graph.has(e.to)) queue.push(e.to);
    }
  }
  return seen;
}
