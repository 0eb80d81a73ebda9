import type { ValidationEnv } from '../load/kinds.js';
import { problemAt, type Manifest } from '../load/manifest.js';
import type { DesiredRow } from '../plan/types.js';
import type { Config } from '../../runtime/config/types.js';
import { DEFAULT_TENANT, type ServiceRow } from '../../runtime/model/types.js';
import { checkNameClaim, nameRules, toFqdn, type NameRules, type NamedService } from '../../runtime/tenancy/names.js';
import { scriptPolicyOf } from '../../runtime/model/script-policy.js';

/**
 * Name ownership for git manifests (docs/api.md "Name ownership"). Git rows belong to the default
 * tenant and git is a supra-tenant writer: it may use reserved names, but not a name delegated to
 * another tenant, nor (first come) a name at, under or above another tenant's service. GitOps
 * status is read by tenant roles (the operator tenant's), not only by the system key, so these
 * messages name the suffix but never another tenant or its services.
 */

/** What validation may know about the daemon `cfg` describes. */
export function validationEnv(cfg: Config): ValidationEnv {
  return { geoipDb: Boolean(cfg.loadbalancer.geoip.dbPath), asnDb: Boolean(cfg.loadbalancer.asn.dbPath), names: nameRules(cfg), scripts: scriptPolicyOf(cfg.health) };
}

/** The DNS name a manifest claims, and where: a Service's domain, a TxtRecord's name. */
const NAME_FIELDS: Record<string, string> = { Service: 'domain', TxtRecord: 'name' };

/** `file:line` problems of Service and TxtRecord manifests whose name is delegated to another tenant. Pure. */
export function manifestNameProblems(manifests: Iterable<Manifest>, names: NameRules | undefined): string[] {
  const out: string[] = [];
  if (!names) return out;
  for (const m of manifests) {
    const field = NAME_FIELDS[m.kind];
    const name = field === undefined ? undefined : m.spec[field];
    if (typeof name !== 'string') continue;
    const v = checkNameClaim(names, { name, tenant: DEFAULT_TENANT, principalTenant: null }, []);
    if (!v.ok) out.push(problemAt(m.src, ['spec', field!], `the name is under ${v.suffix ?? 'a suffix'}, delegated to another tenant in tenancy.delegations; manifests declare names of the default tenant`));
  }
  return out;
}

/** Strict ancestors of a fully qualified name, nearest first (`a.b.c.` → `b.c.`, `c.`). */
function* ancestors(name: string): Generator<string> {
  for (let i = name.indexOf('.'); i >= 0 && i < name.length - 1; i = name.indexOf('.', i + 1)) yield name.slice(i + 1);
}

/**
 * Problems of desired git services against other tenants' services created over the REST API: an
 * undelegated name under or above one (first come; the same name is `checkAgainstActual`'s
 * concern, with or without the rules). Each desired name looks only at
 * the few rows that can overlap it (its ancestors, and a map of every ancestor of a foreign name),
 * so a large repo against many tenant services stays linear. Pure.
 */
export function foreignNameProblems(desired: readonly DesiredRow[], foreign: readonly ServiceRow[], names: NameRules): string[] {
  const out: string[] = [];
  if (foreign.length === 0) return out;
  const byName = new Map<string, ServiceRow>();
  const below = new Map<string, ServiceRow>();
  for (const s of foreign) {
    const d = toFqdn(s.domain);
    byName.set(d, s);
    for (const a of ancestors(d)) if (!below.has(a)) below.set(a, s);
  }
  for (const d of desired) {
    if (d.kind !== 'service') continue;
    const n = toFqdn(String(d.fields.domain));
    if (byName.has(n)) continue;
    const near: NamedService[] = [];
    const under = below.get(n);
    if (under) near.push(under);
    for (const a of ancestors(n)) { const s = byName.get(a); if (s) near.push(s); }
    if (near.length === 0) continue;
    const v = checkNameClaim(names, { name: n, tenant: DEFAULT_TENANT, principalTenant: null }, near);
    if (!v.ok) out.push(`${d.source ?? '(unknown file)'}: Service "${d.key}": domain ${n} is not available: a service of another tenant is at, under or above it`);
  }
  return out;
}
