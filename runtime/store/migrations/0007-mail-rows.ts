/**
 * Moves the runtime mail settings onto the Plan write path (docs/alerts.md "Mail settings"): the
 * one server-wide row of migration 0003 becomes the `resources` row `mail:system` of kind
 * `mailsettings` (JSON `data`, origin `api`, revision `migration`), then the old table is dropped.
 * The sealed password is copied as it is (`gcm1:…` or `plain:…`; NULL when none), so the same
 * GSLB_SECRET_KEY still opens it. Booleans become JSON booleans, `to_json` a JSON array.
 *
 * A migration cannot read the config file, so the row records the tenant `default` (the default
 * `tenancy.operatorTenant`); the server-wide row is found by its id, never by its tenant. Like the
 * rows of 0006, a copied row is not in the config stream and stays on the node that had it.
 */
export const sql = `
INSERT INTO resources (kind, id, tenant_id, data, origin, revision, created_at, updated_at)
SELECT 'mailsettings', 'mail:system', 'default',
  json_object('id', 'mail:system', 'kind', 'mailsettings', 'origin', 'api', 'revision', 'migration', 'tenantId', 'default',
    'host', host, 'port', port, 'from', from_addr, 'to', json(to_json), 'username', username, 'password', password,
    'tls', json(CASE WHEN tls = 1 THEN 'true' ELSE 'false' END),
    'startTls', json(CASE WHEN start_tls = 1 THEN 'true' ELSE 'false' END),
    'enabled', json(CASE WHEN enabled = 1 THEN 'true' ELSE 'false' END),
    'updatedAt', updated_at),
  'api', 'migration', updated_at, updated_at
FROM smtp_settings WHERE id = 1;

DROP TABLE smtp_settings;
`;
