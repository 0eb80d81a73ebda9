import type { Edge } from './import-graph.js';

/**
 * The layers of docs/architecture.md "Folders and import directions", bottom to top:
 * shared libraries, the write kernel (core/), the daemon's kit (the HTTP server kit, the `Core`
 * context, the `Part` type), features (runtime/<feature>/ and gitops/), and the composition roots
 * (runtime/main.ts, daemon.ts, parts-all.ts, kinds-all.ts, the `worker-main.ts` of each worker
 * thread) with gslbctl (cli/).
 */
export type Layer = 'lib' | 'kernel' | 'kit' | 'feature' | 'root';

const LIB_FILES = new Set(['errors', 'paths', 'args', 'worker-thread', 'ports', 'shutdown', 'listen-error', 'cli-flags', 'timers']
  .map((n) => `runtime/${n}.ts`));
const LIB_DIRS = ['log', 'net', 'crypto', 'config', 'store', 'tenancy', 'geo', 'balancer'].map((d) => `runtime/${d}/`);
const KIT_FILES = new Set(['runtime/app.ts', 'runtime/parts.ts']);
const ROOT_FILES = new Set(['runtime/main.ts', 'runtime/daemon.ts', 'runtime/parts-all.ts', 'runtime/kinds-all.ts']);

export function layerOf(file: string): Layer {
  if (file.startsWith('core/')) return 'kernel';
  if (file.startsWith('cli/') || ROOT_FILES.has(file) || file.endsWith('/worker-main.ts')) return 'root';
  if (LIB_FILES.has(file) || LIB_DIRS.some((d) => file.startsWith(d))) return 'lib';
  if (KIT_FILES.has(file) || file.startsWith('runtime/api/') || file.startsWith('runtime/ports/')) return 'kit';
  return 'feature';
}

/** The unit a file belongs to for the folder rules: `runtime/dns`, `gitops`, `core`, `cli`, or the file itself. */
export function unitOf(file: string): string {
  const parts = file.split('/');
  if (['core', 'gitops', 'cli'].includes(parts[0]!)) return parts[0]!;
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file;
}

/** A feature's public face: the one file other features may import (`runtime/health/port.ts`). */
export const isPort = (file: string) => file.endsWith('/port.ts');

type Graph = Map<string, Edge[]>;
const localEdges = (g: Graph) => [...g.values()].flat().filter((e) => g.has(e.to));

/** Every import cycle between files, as lists of files (Tarjan's strongly connected components of size > 1, or a self-import). */
export function fileCycles(g: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); on.add(v);
    for (const e of g.get(v) ?? []) {
      if (!g.has(e.to)) continue;
      if (!index.has(e.to)) { visit(e.to); low.set(v, Math.min(low.get(v)!, low.get(e.to)!)); }
      else if (on.has(e.to)) low.set(v, Math.min(low.get(v)!, index.get(e.to)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) { on.delete(w); scc.push(w); if (w === v) break; }
      if (scc.length > 1 || (g.get(v) ?? []).some((e) => e.to === v)) out.push(scc.sort());
    }
  };
  for (const v of [...g.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** Imports of the kernel that leave it for anything but a shared library or a package. */
export function kernelLeaks(g: Graph): Edge[] {
  return localEdges(g).filter((e) => layerOf(e.from) === 'kernel' && !['kernel', 'lib'].includes(layerOf(e.to)));
}

/** Imports of a shared library into a feature, the kit or a root. */
export function libraryLeaks(g: Graph): Edge[] {
  return localEdges(g).filter((e) => layerOf(e.from) === 'lib' && !['kernel', 'lib'].includes(layerOf(e.to)));
}

/** Imports of the kit (HTTP server kit, `Core`, `Part`) into a feature other than through its port, or into a root. */
export function kitLeaks(g: Graph): Edge[] {
  return localEdges(g).filter((e) => layerOf(e.from) === 'kit' && (layerOf(e.to) === 'root' || (layerOf(e.to) === 'feature' && !isPort(e.to))));
}

/** Imports from one feature into another that do not go through the other's port.ts, and features importing a root. */
export function featureCrossings(g: Graph): Edge[] {
  return localEdges(g).filter((e) => layerOf(e.from) === 'feature'
    && ((layerOf(e.to) === 'feature' && unitOf(e.to) !== unitOf(e.from) && !isPort(e.to)) || layerOf(e.to) === 'root'));
}

/**
 * Cycles between units (folders) once the composition roots are left out (they import everything by
 * design): an arrow from a lower folder back up closes one.
 */
export function unitCycles(g: Graph): string[][] {
  const units = new Map<string, Edge[]>();
  for (const e of localEdges(g)) {
    if (layerOf(e.from) === 'root' || layerOf(e.to) === 'root') continue;
    const a = unitOf(e.from); const b = unitOf(e.to);
    if (!units.has(a)) units.set(a, []);
    if (!units.has(b)) units.set(b, []);
    if (a !== b) units.get(a)!.push({ from: a, to: b, typeOnly: e.typeOnly });
  }
  return fileCycles(units);
}
