import type { ValidationEnv } from '../../runtime/ports/kinds.js';
import type { KindRegistry } from '../kinds/registry.js';
import { problemAt, type Manifest } from '../load/manifest.js';
import type { DesiredRow } from '../../core/plan/types.js';
import type { Config } from '../../runtime/config/types.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { checkNameClaim, checkSuffix, nameRules, toFqdn, type NameRules, type NamedService } from '../../runtime/tenancy/names.js';
import { scriptPolicyOf } from '../../runtime/config/script-policy.js';

/**
 * Name ownership for git manifests (docs/api.md "Name ownership"). Git rows belong to the default
 * tenant and git is a supra-tenant writer: it may use reserved names, but not a name delegated to
 * another tenant, nor (first come) a name at, under or above another tenant's service. GitOps
 * status is read by tenant roles (the operator tenant's), not only by the system key, so these
 * messages name the suffix but never another tenant or its services.
 */

/**
 * What validation may know about the daemon `cfg` describes. With `env` (the daemon's own
 * environment) AlertTarget secret references must also be readable on this node.
 */
export function validationEnv(cfg: Config, env?: NodeJS.ProcessEnv): ValidationEnv {
  return {
    geoipDb: Boolean(cfg.loadbalancer.geoip.dbPath), asnDb: Boolean(cfg.loadbalancer.asn.dbPath), names: nameRules(cfg), scripts: scriptPolicyOf(cfg.health),
    alertSecrets: { policy: { env: env ?? {}, dirs: cfg.alerts.secretDirs, operatorTenant: cfg.tenancy.operatorTenant }, present: env !== undefined },
  };
}

/** The rules when the daemon's config is not known: no delegations, no reserved names. */
const NO_RULES: NameRules = { operatorTenant: DEFAULT_TENANT, delegations: new Map(), requireDelegation: false, reserved: new Set() };

/**
 * `file:line` problems of manifests that claim a DNS name (their kind's `claim`: Service, Redirect,
 * TxtRecord) whose name is a public suffix (or a wildcard at or above one), or is delegated to
 * another tenant. Pure.
 */
export function manifestNameProblems(manifests: Iterable<Manifest>, names: NameRules | undefined, kinds: KindRegistry): string[] {
  const out: string[] = [];
  for (const m of manifests) {
    const c = kinds.get(m.kind)?.claim?.(m);
    if (!c) continue;
    // without the daemon's config (gslbctl validate alone) only the public-suffix rule is known
    const v = names ? checkNameClaim(names, { name: c.name, wildcard: c.wildcard, tenant: DEFAULT_TENANT, principalTenant: null }, []) : checkSuffix(NO_RULES, c.name, c.wildcard);
    if (v.ok) continue;
    if (v.reason === 'PublicSuffix') out.push(problemAt(m.src, ['spec', c.field], v.message));
    else out.push(problemAt(m.src, ['spec', c.field], `the name is under ${v.suffix ?? 'a suffix'}, delegated to another tenant in tenancy.delegations; manifests declare ${c.what} of the default tenant`));
  }
  return out;
}

/** Strict ancestors of a fully qualified name, nearest first (`a.b.c.` → `b.c.`, `c.`). */
function* ancestors(name: string): Generator<string> {
  for (let i = name.indexOf('.'); i >= 0 && i < name.length - 1; i = name.indexOf('.', i + 1)) yield name.slice(i + 1);
}

/**
 * Problems of desired rows that claim names (their kind's `rowClaims`: services, redirect rules)
 * against other tenants' claims (`foreign`, all created over the REST API, each called
 * `nounOf(it)`): an undelegated name under or above one (first
 * come; the same name is `checkAgainstActual`'s concern, with or without the rules). Each desired name looks only at
 * the few rows that can overlap it (its ancestors, and a map of every ancestor of a foreign name),
 * so a large repo against many tenant services stays linear. Pure.
 */
export function foreignNameProblems(desired: readonly DesiredRow[], foreign: readonly NamedService[], names: NameRules, kinds: KindRegistry, nounOf: (n: NamedService) => string): string[] {
  const out: string[] = [];
  if (foreign.length === 0) return out;
  const byName = new Map<string, NamedService>();
  const below = new Map<string, NamedService>();
  for (const s of foreign) {
    const d = toFqdn(s.domain);
    byName.set(d, s);
    for (const a of ancestors(d)) if (!below.has(a)) below.set(a, s);
  }
  for (const d of desired) {
    const claim = kinds.ofRow(d.kind)?.rowClaims?.claim(d);
    if (!claim) continue;
    const n = claim.name;
    if (byName.has(n)) continue;
    const near: NamedService[] = [];
    const under = below.get(n);
    if (under) near.push(under);
    for (const a of ancestors(n)) { const s = byName.get(a); if (s) near.push(s); }
    if (near.length === 0) continue;
    const v = checkNameClaim(names, { name: n, tenant: DEFAULT_TENANT, principalTenant: null }, near);
    if (!v.ok && v.reason === 'PublicSuffix') continue; // manifestNameProblems names it
    const what = nearbyWhat(kinds, near.map(nounOf));
    if (!v.ok) out.push(`${d.source ?? '(unknown file)'}: ${claim.label} ${n} is not available: ${what} of another tenant is at, under or above it`);
  }
  return out;
}

/**
 * What is at, under or above a name, for a message: the first name-claiming kind's noun (the
 * name rules are stated over it: services) and every other one present, in registry order
 * (`a service or redirect rule`).
 */
function nearbyWhat(kinds: KindRegistry, present: readonly string[]): string {
  const nouns = kinds.all().flatMap((k) => (k.rowClaims ? [k.rowClaims.noun] : []));
  return `a ${nouns.filter((noun, i) => i === 0 || present.includes(noun)).join(' or ')}`;
}
