import { ROLES, type Role } from '../ports/permissions.js';

/** Reads a dotted path (`realm_access.roles`) from a claims object; undefined when absent. */
export function readClaim(claims: Record<string, unknown>, path: string): unknown {
  let cur: unknown = claims;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * The role for a single-sign-on user (gslb-config-auth.md §5.7): the roleClaim value (a string or
 * a list; the first value with a mapping wins) through roleMapping, else defaultRole. An empty
 * roleClaim gives everyone defaultRole. Unknown role names in the mapping are ignored.
 */
export function resolveRole(claims: Record<string, unknown>, roleClaim: string, roleMapping: Record<string, string>, defaultRole: Role): Role {
  if (!roleClaim) return defaultRole;
  const v = readClaim(claims, roleClaim);
  const values = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  for (const item of values) {
    if (typeof item !== 'string' && typeof item !== 'number') continue;
    const mapped = roleMapping[String(item)];
    if (mapped && (ROLES as readonly string[]).includes(mapped)) return mapped as Role;
  }
  return defaultRole;
}

/** True when the e-mail's domain is allowed (an empty list allows every domain). Case-insensitive, exact domain. */
export function domainAllowed(email: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const at = email.lastIndexOf('@');
  if (at < 0) return false;
  const domain = email.slice(at + 1).toLowerCase();
  return allowed.some((d) => d.trim().toLowerCase().replace(/^@/, '') === domain);
}
