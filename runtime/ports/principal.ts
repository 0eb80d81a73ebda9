import type { Permission, Role } from './permissions.js';
import { roleAllows } from './permissions.js';

/** Who made a request. `tenantId` null means supra-tenant (system key, dev mode). */
export interface Principal {
  kind: 'dev' | 'system' | 'user' | 'apikey' | 'anon';
  tenantId: string | null;
  role?: Role;
  userId?: string;
  /** last four characters of the presented token, for the audit log; `anon` when none */
  actor: string;
  /** the raw session token when the request was authenticated by one (for logout) */
  sessionToken?: string;
}

/**
 * True when the principal may use the permission. System and dev principals may do anything;
 * tenant principals hold server-wide permissions only in the operator tenant.
 */
export function principalAllows(p: Principal, perm: Permission, operatorTenant: string): boolean {
  if (p.kind === 'system' || p.kind === 'dev') return true;
  return p.role !== undefined && p.tenantId !== null && roleAllows(p.role, perm, p.tenantId, operatorTenant);
}
