import type { ServiceRow } from '../../core/model/types.js';
import { rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { checkNameClaim, type NamedService, type NameRules, type NameVerdict } from '../tenancy/names.js';
import { isWildcard, ownedName, REDIRECT_KIND, redirectClaim, type RedirectRow } from './rules.js';

/**
 * A redirect host is a name like a service's domain (docs/redirects.md "Names"): the same
 * reserved names, delegations and first-come rules hold across tenants, against services and
 * redirect rules alike. Within one tenant a redirect may share its name with a service (the
 * service's DNS answer points at the redirect listener), but two rules never share a host. Pure.
 */

/** Redirect rules of tenants other than `tenant`, as named rows (for service and redirect claims). */
export function foreignRedirectClaims(s: Snapshot, tenant: string): NamedService[] {
  const out: NamedService[] = [];
  for (const r of rowsOf<RedirectRow>(s, REDIRECT_KIND).values()) if (r.tenantId !== tenant) out.push(redirectClaim(r));
  return out;
}

/**
 * May `host` be used for a rule of `tenant` (the claimant's tenant is `principalTenant`, null for
 * the system key and dev mode)? First a rule of the same tenant with the same host (409 naming
 * it), then `checkNameClaim` on the host's name against other tenants' services and rules. A
 * refusal's message starts with `host: ` and, to a tenant, never names another tenant's rows.
 */
export function checkRedirectHost(names: NameRules, s: Snapshot, claim: { host: string; tenant: string; principalTenant: string | null; selfId?: string | undefined }): NameVerdict {
  for (const r of rowsOf<RedirectRow>(s, REDIRECT_KIND).values()) {
    if (r.id !== claim.selfId && r.tenantId === claim.tenant && r.host === claim.host) {
      return { ok: false, reason: 'Taken', status: 409, message: `host: ${claim.host} already has a redirect rule (${r.id})` };
    }
  }
  const others: NamedService[] = foreignRedirectClaims(s, claim.tenant);
  for (const svc of rowsOf<ServiceRow>(s, 'service').values()) if (svc.tenantId !== claim.tenant) others.push(svc);
  const v = checkNameClaim(names, { name: ownedName(claim.host), wildcard: isWildcard(claim.host), tenant: claim.tenant, principalTenant: claim.principalTenant, selfId: claim.selfId }, others);
  return v.ok ? v : { ...v, message: `host: ${v.message}` };
}
