/**
 * Config keys that were renamed (docs/forms.md "Tiers"): the old name is still read, moved to the
 * new one before the schema check, and each use is a deprecation warning (logged once at start,
 * printed by `gslbctl validate --config`). Giving both names is a problem: which one was meant
 * cannot be guessed.
 */
export interface RenamedKey { from: string[]; to: string[]; why: string }

/** Every renamed key, old path → new path. */
export const RENAMED_KEYS: readonly RenamedKey[] = [
  { from: ['forms', 'plans'], to: ['forms', 'tiers'], why: 'a plan in gslbd is a change set' },
  { from: ['forms', 'defaultPlan'], to: ['forms', 'defaultTier'], why: 'a plan in gslbd is a change set' },
  { from: ['forms', 'tenantPlans'], to: ['forms', 'tenantTiers'], why: 'a plan in gslbd is a change set' },
];

/** What the rename found in a config: the old keys read (`used`) and those given next to their new name (`clashes`). */
export interface RenameResult { used: RenamedKey[]; clashes: RenamedKey[] }

/** The mapping at `path` in `obj`, or undefined. */
function mappingAt(obj: Record<string, unknown>, path: readonly string[]): Record<string, unknown> | undefined {
  let cur: unknown = obj;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur !== null && typeof cur === 'object' && !Array.isArray(cur) ? (cur as Record<string, unknown>) : undefined;
}

/**
 * Moves every old key of `obj` (a parsed config, changed in place) to its new name, keeping the
 * order of the keys. An old key given next to its new one is dropped and reported as a clash
 * (the new one is kept, so the rest is still checked).
 */
export function renameOldKeys(obj: Record<string, unknown>): RenameResult {
  const out: RenameResult = { used: [], clashes: [] };
  for (const r of RENAMED_KEYS) {
    const parent = mappingAt(obj, r.from.slice(0, -1));
    const oldKey = r.from[r.from.length - 1]!;
    const newKey = r.to[r.to.length - 1]!;
    if (!parent || !Object.hasOwn(parent, oldKey)) continue;
    if (Object.hasOwn(parent, newKey)) {
      out.clashes.push(r);
      delete parent[oldKey];
      continue;
    }
    out.used.push(r);
    const entries = Object.entries(parent).map(([k, v]): [string, unknown] => [k === oldKey ? newKey : k, v]);
    for (const k of Object.keys(parent)) delete parent[k];
    Object.assign(parent, Object.fromEntries(entries));
  }
  return out;
}

/** The path as the file wrote it: a path under a renamed key that the file gave by its old name names the old key. */
export function writtenPath(path: readonly (string | number)[], used: readonly RenamedKey[]): (string | number)[] {
  for (const r of used) {
    if (r.to.every((seg, i) => path[i] === seg)) return [...r.from, ...path.slice(r.to.length)];
  }
  return [...path];
}

/** The warning of an old key read. */
export const renamedMessage = (r: RenamedKey): string =>
  `${r.from.join('.')} is deprecated: it is read as ${r.to.join('.')} (${r.why}); rename it, the old name will be removed`;

/** The problem of an old key given next to its new name. */
export const clashMessage = (r: RenamedKey): string =>
  `${r.from.join('.')} is the deprecated name of ${r.to.join('.')}, and both are given: keep only ${r.to.join('.')}`;
