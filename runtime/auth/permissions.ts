/**
 * The one permission table (gslb-config-auth.md §5). Routes declare the permission they need;
 * roles grant permissions. The system key and dev mode skip the table.
 */
export const PERMISSIONS = [
  'pools:read', 'pools:write',
  'users:read', 'users:write',
  'settings:read', 'settings:write',
  'gitops:read', 'gitops:write',
  // supra-tenant: managing tenants and their legacy API keys (no role has these; system key only)
  'tenants:read', 'tenants:write',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type Role = 'tenant_admin' | 'operator' | 'viewer';
export const ROLES: readonly Role[] = ['tenant_admin', 'operator', 'viewer'];

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  tenant_admin: ['pools:read', 'pools:write', 'users:read', 'users:write', 'settings:read', 'settings:write', 'gitops:read', 'gitops:write'],
  operator: ['pools:read', 'pools:write', 'users:read', 'gitops:read'],
  // "read-only on all resources of the tenant" (gslb-config-auth.md §5.4) includes its users
  viewer: ['pools:read', 'users:read', 'gitops:read'],
};

/** True when the role grants the permission. */
export function roleAllows(role: Role, p: Permission): boolean {
  return ROLE_PERMISSIONS[role].includes(p);
}
