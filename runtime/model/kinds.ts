import type { Row } from './types.js';

/**
 * The registry of row kinds. A kind names its parent (for cascading deletes and indexes) and its
 * place in apply order. Adding a kind is one `registerKind` call plus a schema and, for git, a
 * manifest mapper.
 */
export interface KindInfo {
  kind: string;
  /** apply order: lower is created first and deleted last */
  order: number;
  /** field holding the parent's id, and the parent's kind (children are deleted with the parent) */
  parent?: { field: string; kind: string };
  /** fields of other kinds that reference this kind and are set to null when it is deleted */
  nullifiedBy?: { kind: string; field: string }[];
  /** human label used in diffs and errors (`pool "eu"`) */
  label: (row: Row) => string;
}

const f = (row: Row, k: string) => String((row as unknown as Record<string, unknown>)[k]);

const registry = new Map<string, KindInfo>();

/** Registers or replaces a kind. */
export function registerKind(info: KindInfo): void {
  registry.set(info.kind, info);
}

/** The kind's registration; throws for an unknown kind. */
export function kindInfo(kind: string): KindInfo {
  const k = registry.get(kind);
  if (!k) throw new Error(`unknown resource kind "${kind}"`);
  return k;
}

/** All registered kinds in apply order. */
export function allKinds(): KindInfo[] {
  return [...registry.values()].sort((a, b) => a.order - b.order);
}

registerKind({ kind: 'pool', order: 10, nullifiedBy: [{ kind: 'service', field: 'poolId' }], label: (r) => `pool "${f(r, 'name')}"` });
registerKind({ kind: 'healthcheck', order: 20, parent: { field: 'poolId', kind: 'pool' }, label: (r) => `healthcheck of pool ${f(r, 'poolId')}` });
registerKind({ kind: 'member', order: 30, parent: { field: 'poolId', kind: 'pool' }, label: (r) => `member ${f(r, 'ipAddress')}:${f(r, 'port')}` });
registerKind({ kind: 'georule', order: 40, parent: { field: 'poolId', kind: 'pool' }, label: (r) => `georule ${f(r, 'cidr')} -> ${f(r, 'endpoint')}` });
registerKind({ kind: 'service', order: 50, label: (r) => `service "${f(r, 'name')}"` });
