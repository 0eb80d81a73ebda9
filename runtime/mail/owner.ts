/**
 * Whose mail settings a request or an alert uses (docs/alerts.md "Mail settings"): the
 * server-wide row (password reset, system alerts, the operator tenant's health alerts) or one
 * tenant's own row (health alerts of that tenant's pools only).
 */
export type MailOwner = { scope: 'system' } | { scope: 'tenant'; tenantId: string };

/** The server-wide owner. */
export const SYSTEM_MAIL: MailOwner = Object.freeze({ scope: 'system' });

/** Row kind of mail settings (core/model/kinds.ts). */
export const MAIL_KIND = 'mailsettings';

/** Row id of the server-wide settings. */
export const SYSTEM_MAIL_ID = 'mail:system';

/**
 * The owner for a tenant (null: a supra-tenant caller). The operator tenant and supra-tenant
 * callers own the server-wide settings; every other tenant owns only its own row.
 */
export function mailOwnerOf(tenantId: string | null, operatorTenant: string): MailOwner {
  return tenantId === null || tenantId === operatorTenant ? SYSTEM_MAIL : { scope: 'tenant', tenantId };
}

/** The row id of an owner's settings: `mail:system` or `mail:<tenantId>`. */
export function mailRowId(owner: MailOwner): string {
  return owner.scope === 'system' ? SYSTEM_MAIL_ID : `mail:${owner.tenantId}`;
}

/** A stable text key for maps and logs: `system` or `tenant:<id>`. */
export function ownerKey(owner: MailOwner): string {
  return owner.scope === 'system' ? 'system' : `tenant:${owner.tenantId}`;
}
