import type { ValidationEnv } from '../load/kinds.js';
import { problemAt, type Manifest } from '../load/manifest.js';
import type { DesiredRow } from '../../core/plan/types.js';
import type { Config } from '../../runtime/config/types.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { checkNameClaim, checkSuffix, nameRules, toFqdn, type NameRules, type NamedService } from '../../runtime/tenancy/names.js';
import { isWildcard, normalHost, ownedName } from '../../runtime/redirect/rules.js';
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

/** The DNS name a Service, Redirect or TxtRecord manifest claims, with the field that holds it (a wildcard host claims its base). */
function claimOf(m: Manifest): { name: string; wildcard?: boolean; field: string; what: string } | undefined {
  if (m.kind === 'Service' && typeof m.spec.domain === 'string') return { name: m.spec.domain, field: 'domain', what: 'services' };
  if (m.kind === 'Redirect' && typeof m.spec.host === 'string') {
    const host = normalHost(m.spec.host);
    return { name: ownedName(host), wildcard: isWildcard(host), field: 'host', what: 'redirect rules' };
  }
  if (m.kind === 'TxtRecord' && typeof m.spec.name === 'string') return { name: m.spec.name, field: 'name', what: 'TXT records' };
  return undefined;
}

/**
 * `file:line` problems of Service, Redirect and TxtRecord manifests whose name is a public suffix
 * (or a wildcard at or above one), or is delegated to another tenant. Pure.
 */
export function manifestNameProblems(manifests: Iterable<Manifest>, names: NameRules | undefined): string[] {
  const out: string[] = [];
  for (const m of manifests) {
    const c = claimOf(m);
    if (!c) continue;
    // without the daemon's config (gslbctl validate alone) only the public-suffix rule is known
    const v = names ? checkNameClaim(names, { name: c.name, wildcard: c.wildcard, tenant: DEFAULT_TENANT, principalTenant: null }, []) : checkSuffix(NO_RULES, c.name, c.wildcard);
    if (v.ok) continue;
    if (v.reason === 'PublicSuffix') out.push(problemAt(m.src, ['spec', c.field], v.message));
    else out.push(problemAt(m.src, ['spec', c.field], `the name is under ${v.suffix ?? 'a suffix'}, delegated to another tenant in tenancy.delegations; manifests declare ${c.what} of the default tenant`));
  }
  return out;
}

/** The name a desired service or redirect row claims (fully qualified), with its manifest label. */
export function desiredClaim(d: DesiredRow): { name: string; label: string } | undefined {
  if (d.kind === 'service') return { name: toFqdn(String(d.fields.domain)), label: `Service "${d.key}": domain` };
  if (d.kind === 'redirect') return { name: toFqdn(ownedName(String(d.fields.host))), label: `Redirect "${d.key}": host ${String(d.fields.host)}, name` };
  return undefined;
}

/** Strict ancestors of a fully qualified name, nearest first (`a.b.c.` → `b.c.`, `c.`). */
function* ancestors(name: string): Generator<string> {
  for (let i = name.indexOf('.'); i >= 0 && i < name.length - 1; i = name.indexOf('.', i + 1)) yield name.slice(i + 1);
}

/**
 * Problems of desired git services and redirect rules against other tenants' services and redirect
 * rules (`foreign`, all created over the REST API): an undelegated name under or above one (first
 * come; the same name is `checkAgainstActual`'s concern, with or without the rules). Each desired name looks only at
 * the few rows that can overlap it (its ancestors, and a map of every ancestor of a foreign name),
 * so a large repo against many tenant services stays linear. Pure.
 */
export function foreignNameProblems(desired: readonly DesiredRow[], foreign: readonly NamedService[], names: NameRules): string[] {
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
    const claim = desiredClaim(d);
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
    const what = near.some((s) => s.kind === 'redirect') ? 'a service or redirect rule' : 'a service';
    if (!v.ok) out.push(`${d.source ?? '(unknown file)'}: ${claim.label} ${n} is not available: ${what} of another tenant is at, under or above it`);
  }
  return out;
}
