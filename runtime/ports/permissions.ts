/**
 * The one permission table (gslb-config-auth.md §5). Routes declare the permission they need;
 * roles grant permissions. The system key and dev mode skip the table.
 */
export const PERMISSIONS = [
  'pools:read', 'pools:write',
  // HTTP redirect rules (docs/redirects.md)
  'redirects:read', 'redirects:write',
  'users:read', 'users:write',
  'settings:read', 'settings:write',
  'gitops:read', 'gitops:write',
  'cluster:read',
  // taking a database backup now, and reading the license status (docs/backup.md, docs/license.md)
  'backups:write', 'license:read',
  // a workspace's form-service API keys (docs/forms.md)
  'apikeys:read', 'apikeys:write',
  // supra-tenant: managing tenants and their legacy API keys (no role has these; system key only)
  'tenants:read', 'tenants:write',
  // stopping and starting the `gslbd --demo` backends (no role has it; system key and dev mode only)
  'demo:write',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/**
 * Server-wide permissions (docs/security.md): the config repo, its plans, the cluster's nodes, the
 * database's backups and the license belong to the system, not to a tenant. Roles hold them only in the operator tenant
 * (`tenancy.operatorTenant`); in every other tenant they are withheld.
 */
export const SERVER_PERMISSIONS: ReadonlySet<Permission> = new Set(['gitops:read', 'gitops:write', 'cluster:read', 'backups:write', 'license:read']);

export type Role = 'tenant_admin' | 'operator' | 'viewer';
export const ROLES: readonly Role[] = ['tenant_admin', 'operator', 'viewer'];

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  tenant_admin: ['pools:read', 'pools:write', 'redirects:read', 'redirects:write', 'users:read', 'users:write', 'settings:read', 'settings:write', 'gitops:read', 'gitops:write', 'cluster:read', 'backups:write', 'license:read', 'apikeys:read', 'apikeys:write'],
  operator: ['pools:read', 'pools:write', 'redirects:read', 'redirects:write', 'users:read', 'gitops:read', 'cluster:read', 'license:read', 'apikeys:read'],
  // "read-only on all resources of the tenant" (gslb-config-auth.md §5.4) includes its users
  viewer: ['pools:read', 'redirects:read', 'users:read', 'gitops:read', 'cluster:read', 'license:read'],
};

/**
 * True when `role` in tenant `tenantId` grants the permission: the role's table, less the
 * server-wide permissions outside the operator tenant.
 */
export function roleAllows(role: Role, p: Permission, tenantId: string, operatorTenant: string): boolean {
  if (SERVER_PERMISSIONS.has(p) && tenantId !== operatorTenant) return false;
  return ROLE_PERMISSIONS[role].includes(p);
}

/** The permissions `role` holds in tenant `tenantId` (for GET /auth/me). */
export function permissionsOf(role: Role, tenantId: string, operatorTenant: string): Permission[] {
  return ROLE_PERMISSIONS[role].filter((p) => roleAllows(role, p, tenantId, operatorTenant));
}
