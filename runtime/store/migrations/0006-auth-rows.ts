/**
 * Moves the auth part's tables onto the Plan write path (docs/auth.md "Storage"): every tenant,
 * user and legacy tenant API key of migration 0002 becomes a `resources` row of kind `tenant`,
 * `user` or `apikey` (JSON `data`, origin `api`, revision `migration`), then the old tables are
 * dropped so no second copy of a password hash or a sealed TOTP secret stays behind. Row fields
 * keep their meaning and their units (times in ms). The `default` tenant that 0002 inserted is not
 * copied: it is built in (runtime/auth/tenant-store.ts), so a new database has no rows at all.
 *
 * Rows copied here are not in the config stream: like any row that existed before config sync
 * was switched on, they stay on the node that had them (docs/cluster.md).
 */
export const sql = `
INSERT INTO resources (kind, id, tenant_id, data, origin, revision, created_at, updated_at)
SELECT 'tenant', id, id,
  json_object('id', id, 'kind', 'tenant', 'origin', 'api', 'revision', 'migration', 'tenantId', id,
    'name', name, 'createdAt', created_at),
  'api', 'migration', created_at, created_at
FROM tenants WHERE id <> 'default' ORDER BY rowid;

INSERT INTO resources (kind, id, tenant_id, data, origin, revision, created_at, updated_at)
SELECT 'user', id, tenant_id,
  json_object('id', id, 'kind', 'user', 'origin', 'api', 'revision', 'migration', 'tenantId', tenant_id,
    'email', email, 'displayName', display_name, 'role', role, 'passwordHash', password_hash,
    'authProvider', auth_provider, 'totpSecret', totp_secret, 'totpPending', totp_pending,
    'totpLastStep', totp_last_step, 'createdAt', created_at, 'updatedAt', updated_at),
  'api', 'migration', created_at, updated_at
FROM users ORDER BY created_at, rowid;

INSERT INTO resources (kind, id, tenant_id, data, origin, revision, created_at, updated_at)
SELECT 'apikey', id, tenant_id,
  json_object('id', id, 'kind', 'apikey', 'origin', 'api', 'revision', 'migration', 'tenantId', tenant_id,
    'name', name, 'keyHash', key_hash, 'createdAt', created_at),
  'api', 'migration', created_at, created_at
FROM tenant_api_keys ORDER BY created_at, rowid;

DROP TABLE tenant_api_keys;
DROP TABLE users;
DROP TABLE tenants;
`;
