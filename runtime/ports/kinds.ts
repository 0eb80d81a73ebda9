import type { DesiredRow } from '../../core/plan/types.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';
import type { NameRules, NamedService } from '../tenancy/names.js';
import type { ScriptPolicy } from '../config/script-policy.js';
import type { YamlSource } from '../config/yaml-source.js';

/**
 * The port through which a feature declares a resource kind of the config repo (docs/gitops.md
 * "Resource kinds"): a feature's `kind.ts` exports `ResourceKind`s, runtime/kinds-all.ts lists
 * them, and the loader and validator in gitops/ run whatever registry they are given.
 */

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
   * where AlertTarget secret references may point (alerts.secretDirs, the shape of
   * runtime/alerts/secret-ref.ts `SecretPolicy`); `present`: the env is the daemon's own, so
   * unset variables and unreadable files are refused too
   */
  alertSecrets?: { policy: { env: NodeJS.ProcessEnv; dirs: readonly string[]; operatorTenant: string }; present: boolean } | undefined;
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

/** The DNS name a manifest claims (docs/api.md "Name ownership"), with the field that holds it. */
export interface ManifestClaim {
  name: string;
  /** a wildcard claims its base name */
  wildcard?: boolean | undefined;
  /** the field under `spec` */
  field: string;
  /** what the manifest declares, plural (`services`), for messages */
  what: string;
}

/**
 * How the desired rows of a kind claim DNS names against the running state (rows created over
 * the REST API, other tenants' rows).
 */
export interface RowClaims {
  /** what a row of this kind is called in messages (`service`, `redirect rule`) */
  noun: string;
  /** the fully qualified name a desired row claims, and its label (`Service "web": domain`) */
  claim: (d: DesiredRow) => { name: string; label: string } | undefined;
  /**
   * The running rows of this kind that are not git's: `foreign`, those of other tenants (as
   * name claims), and `clash`, why a desired row may not take a name a REST-created row of this
   * kind holds (the text after `<file>: <label> <name> `), or undefined to go on to the
   * other-tenant check.
   */
  against: (actual: Snapshot) => { foreign: NamedService[]; clash: (d: DesiredRow, name: string) => string | undefined };
}

/**
 * A resource kind of the config repo: the manifest it reads, its schema, how a manifest becomes
 * desired rows, and the checks the validator runs for it. Adding a kind is a `kind.ts` in its
 * feature, its schema under schemas/, its row kinds in core/model/kinds.ts, and one line in
 * runtime/kinds-all.ts.
 */
export interface ResourceKind {
  /** `kind:` in the manifest, e.g. `Pool` */
  kind: string;
  /** `apiVersion:` of the manifest (the envelope schema, manifest.v1.schema.json, checks it) */
  apiVersion: string;
  /** schema file under schemas/ (also its `$id`) */
  schema: string;
  /** other schema files under schemas/ that `schema` refers to (the envelope is always loaded) */
  schemaRefs?: readonly string[];
  /** the row kinds `map` produces (core/model/kinds.ts); empty for a kind that makes no rows */
  rows: readonly string[];
  /** the REST routes module of the same resource, for documentation (e.g. `runtime/txt/routes.ts`) */
  routes?: string;
  /** maps a valid manifest to desired rows (keys are natural keys, refs by key). Pure. */
  map: (m: Manifest) => DesiredRow[];
  /** rules the schema cannot express, checked on one schema-valid manifest */
  check?: (m: Manifest, index: ManifestIndex, env: ValidationEnv, report: Report) => void;
  /** the DNS name a manifest claims; checked against public suffixes and delegations */
  claim?: (m: Manifest) => ManifestClaim | undefined;
  /** how its desired rows claim names against the running state */
  rowClaims?: RowClaims;
  /** further problems of the desired rows against the running state (each naming the file) */
  againstActual?: (desired: readonly DesiredRow[], actual: Snapshot) => string[];
}

/** The manifest apiVersion of every built-in kind. */
export const API_VERSION = 'gslb/v1';
