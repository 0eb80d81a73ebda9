import type { DesiredRow } from '../../core/plan/types.js';
import type { Manifest } from './manifest.js';
import type { NameRules } from '../../runtime/tenancy/names.js';
import type { ScriptPolicy } from '../../core/model/script-policy.js';
import type { SecretPolicy } from '../../runtime/alerts/secret-ref.js';

/** What semantic checks may know about the daemon they will run on (undefined: unknown, skip). */
export interface ValidationEnv {
  /** loadbalancer.geoip.dbPath is set */
  geoipDb?: boolean | undefined;
  /** loadbalancer.asn.dbPath is set */
  asnDb?: boolean | undefined;
  /** the daemon's name ownership rules (tenancy.delegations, reserved names) */
  names?: NameRules | undefined;
  /** health.allowScripts and health.scriptDirs (a scriptPath is resolved on this node) */
  scripts?: ScriptPolicy | undefined;
  /**
   * where AlertTarget secret references may point (alerts.secretDirs); `present`: the env is the
   * daemon's own, so unset variables and unreadable files are refused too
   */
  alertSecrets?: { policy: SecretPolicy; present: boolean } | undefined;
}

/** Every valid manifest by kind and name, for cross-manifest checks. */
export type ManifestIndex = ReadonlyMap<string, ReadonlyMap<string, Manifest>>;

const firstCache = new WeakMap<ManifestIndex, Map<string, Map<string, Manifest>>>();

/**
 * The first manifest of `kind` for each value of `keyOf` (a domain, a host), computed once per
 * manifest index and kind: the manifest a later duplicate is reported against.
 */
export function firstByKey(index: ManifestIndex, kind: string, keyOf: (m: Manifest) => string): ReadonlyMap<string, Manifest> {
  let byKind = firstCache.get(index);
  if (!byKind) firstCache.set(index, (byKind = new Map()));
  let map = byKind.get(kind);
  if (!map) {
    map = new Map();
    for (const m of index.get(kind)?.values() ?? []) {
      const k = keyOf(m);
      if (!map.has(k)) map.set(k, m);
    }
    byKind.set(kind, map);
  }
  return map;
}

/** Reports one problem at a path of the manifest being checked. */
export type Report = (path: (string | number)[], rule: string) => void;

/**
 * A manifest kind: its schema, its mapper to desired rows, and its semantic checks. Adding a kind
 * is one `registerManifestKind` call, a schema file and (for new row kinds) a `registerKind`.
 */
export interface ManifestKind {
  /** `kind:` in the manifest, e.g. `Pool` */
  kind: string;
  /** schema file under schemas/ */
  schema: string;
  /** maps a valid manifest to desired rows (keys are natural keys, refs by key). Pure. */
  map: (m: Manifest) => DesiredRow[];
  /** rules the schema cannot express, checked on one schema-valid manifest */
  check?: (m: Manifest, index: ManifestIndex, env: ValidationEnv, report: Report) => void;
}

const registry = new Map<string, ManifestKind>();

/** Registers or replaces a manifest kind. */
export function registerManifestKind(k: ManifestKind): void {
  registry.set(k.kind, k);
}

/** The registered kind, or undefined. */
export function manifestKind(kind: string): ManifestKind | undefined {
  return registry.get(kind);
}

/** Names of the registered kinds, sorted. */
export function manifestKindNames(): string[] {
  return [...registry.keys()].sort();
}
