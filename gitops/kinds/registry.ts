import { API_VERSION, type ResourceKind } from '../../runtime/ports/kinds.js';

/**
 * A set of resource kinds (docs/gitops.md "Resource kinds"), by manifest kind and by the row
 * kinds they produce. The loader and validator read the one they are given; a process installs
 * its own (runtime/kinds-all.ts) for callers that pass none.
 */
export class KindRegistry {
  private readonly byKind = new Map<string, ResourceKind>();
  private readonly byRow = new Map<string, ResourceKind>();

  constructor(kinds: Iterable<ResourceKind> = []) {
    for (const k of kinds) this.add(k);
  }

  /** Adds or replaces a kind (a replaced kind keeps its place in the order). */
  add(k: ResourceKind): void {
    this.byKind.set(k.kind, k);
    for (const r of k.rows) this.byRow.set(r, k);
  }

  /** The kind of `kind:` in a manifest, or undefined. */
  get(kind: string): ResourceKind | undefined {
    return this.byKind.get(kind);
  }

  /** The kind whose manifests produce rows of `rowKind`, or undefined. */
  ofRow(rowKind: string): ResourceKind | undefined {
    return this.byRow.get(rowKind);
  }

  /** Names of the kinds, sorted. */
  names(): string[] {
    return [...this.byKind.keys()].sort();
  }

  /** The kinds in the order they were added. */
  all(): ResourceKind[] {
    return [...this.byKind.values()];
  }
}

let installed: KindRegistry | undefined;

/** Makes `kinds` the process's registry, used where a caller passes none. */
export function installKinds(kinds: KindRegistry): void {
  installed = kinds;
}

/** The process's registry; throws when none was installed (import runtime/kinds-all.js). */
export function installedKinds(): KindRegistry {
  if (!installed) throw new Error('no resource kinds are installed: import runtime/kinds-all.js first');
  return installed;
}

/** A kind to register: `apiVersion` defaults to gslb/v1, `rows` to none declared. */
export type KindDeclaration = Omit<ResourceKind, 'apiVersion' | 'rows'> & Partial<Pick<ResourceKind, 'apiVersion' | 'rows'>>;

/** Adds or replaces a kind in the process's registry. */
export function registerManifestKind(k: KindDeclaration): void {
  installedKinds().add({ ...k, apiVersion: k.apiVersion ?? API_VERSION, rows: k.rows ?? [] });
}
