import type { Config } from '../config/types.js';
import { badRequest, conflict, forbidden, type GslbError } from '../errors.js';
import { publicSuffixRefusal } from './public-suffix.js';

/**
 * Who may use which DNS name (DESIGN decision 12, docs/api.md "Name ownership"). Pure: every
 * function reads only its arguments. Names are compared lower-cased and fully qualified.
 */

/** The rules derived from `dns` and `tenancy` in the daemon's configuration. */
export interface NameRules {
  operatorTenant: string;
  /** delegated suffix (fully qualified, lower-cased) → tenant */
  delegations: ReadonlyMap<string, string>;
  requireDelegation: boolean;
  /** the dns.domain apex, the name servers and the SOA mname: the system's own names */
  reserved: ReadonlySet<string>;
}

/** A service row (or a redirect rule, `kind: 'redirect'`, runtime/redirect/rules.ts) as far as name ownership is concerned. */
export interface NamedService { id: string; name: string; domain: string; tenantId: string; origin?: string; kind?: string }

/** Why a claim was refused: the status the REST API answers with follows from it. */
export type NameRefusal = 'PublicSuffix' | 'Reserved' | 'NotDelegated' | 'DelegationRequired' | 'Taken' | 'Unavailable';

/** The outcome of `checkNameClaim`. `message` is safe to show the claimant. */
export type NameVerdict =
  | { ok: true }
  | { ok: false; reason: NameRefusal; status: 400 | 403 | 409; message: string; suffix?: string };

/** A request to use `name` for a row of `tenant`, made by a principal of `principalTenant`. */
export interface NameClaim {
  name: string;
  /** the tenant the row belongs to */
  tenant: string;
  /** the claimant's tenant; null for supra-tenant callers (system key, dev mode) and git */
  principalTenant: string | null;
  /** the row being renamed, which does not conflict with itself */
  selfId?: string | undefined;
  /** `name` is the base of a wildcard (`*.name`, a redirect host): it claims every name under it */
  wildcard?: boolean | undefined;
}

export { toFqdn } from '../net/dns-names.js';
import { toFqdn } from '../net/dns-names.js';

/** True when `name` is `suffix` or a name below it (both fully qualified). */
export function isAtOrUnder(name: string, suffix: string): boolean {
  return name === suffix || name.endsWith(`.${suffix}`);
}

/** The names only the system may serve: dns.domain, dns.nsNames (default `ns1.<domain>`), soa.mname. */
export function reservedNames(dns: Config['dns']): Set<string> {
  const out = new Set<string>();
  const domain = dns.domain ? toFqdn(dns.domain) : undefined;
  if (domain) out.add(domain);
  // the same defaults as the zone's NS and SOA records (runtime/dns/zone-index.ts makeZone)
  const ns = dns.nsNames && dns.nsNames.length > 0 ? dns.nsNames.map(toFqdn) : domain ? [`ns1.${domain}`] : [];
  for (const n of ns) out.add(n);
  if (dns.soa.mname) out.add(toFqdn(dns.soa.mname));
  return out;
}

const cache = new WeakMap<object, NameRules>();

/**
 * The name rules of a configuration, computed once per config object. A suffix delegated twice
 * keeps its first tenant.
 */
export function nameRules(cfg: Pick<Config, 'dns' | 'tenancy'>): NameRules {
  let r = cache.get(cfg);
  if (!r) {
    const delegations = new Map<string, string>();
    for (const d of cfg.tenancy.delegations) {
      const s = toFqdn(d.suffix);
      if (!delegations.has(s)) delegations.set(s, d.tenant);
    }
    r = { operatorTenant: cfg.tenancy.operatorTenant, delegations, requireDelegation: cfg.tenancy.requireDelegation, reserved: reservedNames(cfg.dns) };
    cache.set(cfg, r);
  }
  return r;
}

/** The longest delegated suffix at or above `name`, with its tenant; undefined when none. */
export function delegationOf(rules: NameRules, name: string): { suffix: string; tenant: string } | undefined {
  if (rules.delegations.size === 0) return undefined;
  // walk from the name towards the root: the first hit is the longest suffix
  for (let n = toFqdn(name); n.length > 0 && n !== '.'; ) {
    const tenant = rules.delegations.get(n);
    if (tenant !== undefined) return { suffix: n, tenant };
    const dot = n.indexOf('.');
    if (dot < 0 || dot === n.length - 1) break;
    n = n.slice(dot + 1);
  }
  return undefined;
}

/** The tenant that owns `name` (the tenant of its longest delegated suffix), or undefined. */
export function nameOwner(rules: NameRules, name: string): string | undefined {
  return delegationOf(rules, name)?.tenant;
}

/**
 * Why the DNS server must not serve a row, or undefined when it may: the name is delegated to
 * another tenant, or a tenant row (not the operator tenant's, created over the API) sits on a
 * reserved name. Catches rows written before the configuration changed.
 */
export function unservedReason(rules: NameRules, row: NamedService): string | undefined {
  const name = toFqdn(row.domain);
  const owner = nameOwner(rules, name);
  if (owner !== undefined && owner !== row.tenantId) return 'delegated to another tenant';
  if (rules.reserved.has(name) && row.tenantId !== rules.operatorTenant && row.origin === 'api') return 'reserved';
  return undefined;
}

const refuse = (reason: NameRefusal, status: 400 | 403 | 409, message: string, suffix?: string): NameVerdict =>
  suffix === undefined ? { ok: false, reason, status, message } : { ok: false, reason, status, message, suffix };

/**
 * The first rule of {@link checkNameClaim} alone: a public suffix, or a wildcard (`*.name` when
 * `wildcard`) at or above one, is refused with 400 naming the suffix, for every claimant; the
 * system's reserved names (dns.domain, which the operator chose) are exempt.
 */
export function checkSuffix(rules: NameRules, name: string, wildcard?: boolean): NameVerdict {
  const n = toFqdn(name);
  if (rules.reserved.has(n)) return { ok: true };
  const ps = publicSuffixRefusal(wildcard ? `*.${n}` : n);
  return ps ? refuse('PublicSuffix', 400, `name ${ps.message}`, ps.suffix) : { ok: true };
}

/**
 * May `claim.name` be used for a row of `claim.tenant`, given the existing `services`? In order:
 * a public suffix, or a wildcard at or above one (400 for every claimant, runtime/tenancy/public-suffix.ts;
 * the system's reserved names excepted, which the operator chose), reserved names (tenant principals: 403), a name delegated to another tenant (403), a name outside
 * the tenant's delegations under `requireDelegation` (tenant principals outside the operator
 * tenant: 403), the same name on another row (409), and, for undelegated names only (first come),
 * a name under or above another tenant's service (reserved names excepted) or, for tenant
 * principals, above another tenant's delegated suffix (409). Messages to tenant principals never name another tenant or its rows.
 * Linear in the number of services.
 */
export function checkNameClaim(rules: NameRules, claim: NameClaim, services: Iterable<NamedService>): NameVerdict {
  const n = toFqdn(claim.name);
  const supra = claim.principalTenant === null;
  const ps = checkSuffix(rules, n, claim.wildcard);
  if (!ps.ok) return ps;
  if (!supra && rules.reserved.has(n)) return refuse('Reserved', 403, `name ${n} is reserved`);
  const del = delegationOf(rules, n);
  if (del && del.tenant !== claim.tenant) {
    return refuse('NotDelegated', 403, supra ? `name ${n} is delegated to tenant "${del.tenant}" (suffix ${del.suffix})` : `name ${n} is not delegated to your tenant`, del.suffix);
  }
  if (!supra && rules.requireDelegation && claim.tenant !== rules.operatorTenant && !del) {
    return refuse('DelegationRequired', 403, `name ${n} is not under a suffix delegated to your tenant`);
  }
  const unavailable = (s?: NamedService) => refuse('Unavailable', 409,
    supra && s ? `domain ${n} is not available: service "${s.name}" (${s.id}) of tenant "${s.tenantId}" is at, under or above it` : `domain ${n} is not available`);
  for (const s of services) {
    if (s.id === claim.selfId) continue;
    const d = toFqdn(s.domain);
    if (d === n) {
      // one row per name, delegated or not: the snapshot indexes services by domain
      return s.tenantId === claim.tenant ? refuse('Taken', 409, `domain ${n} is already served by service "${s.name}" (${s.id})`) : unavailable(s);
    }
    // reserved names (the apex above all) are the system's and enclose every tenant's names
    if (!del && s.tenantId !== claim.tenant && !rules.reserved.has(n) && !rules.reserved.has(d) && (isAtOrUnder(n, d) || isAtOrUnder(d, n))) return unavailable(s);
  }
  if (!del && !supra) {
    // a name above another tenant's suffix would make a zone enclosing that tenant's names
    for (const [suffix, tenant] of rules.delegations) if (tenant !== claim.tenant && isAtOrUnder(suffix, n)) return unavailable();
  }
  return { ok: true };
}

/** The API error of a refused claim: 400, 403 or 409 with the verdict's message. */
export function nameRefusalError(v: Extract<NameVerdict, { ok: false }>): GslbError {
  return v.status === 400 ? badRequest(v.message) : v.status === 403 ? forbidden(v.message) : conflict(v.message);
}
