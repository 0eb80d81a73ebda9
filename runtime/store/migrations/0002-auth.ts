/**
 * Tables of the auth part: tenants, users (bcrypt hashes, TOTP secrets encrypted with
 * GSLB_SECRET_KEY, the last TOTP step used so a code cannot be replayed) and the legacy per-tenant
 * API keys, stored as SHA-256 hex only.
 */
export const sql = `
CREATE TABLE tenants (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
INSERT INTO tenants (id, name, created_at) VALUES ('default', 'default', 0);

CREATE TABLE users (
  id             TEXT PRIMARY KEY,
  tenant_id      TEXT NOT NULL REFERENCES tenants(id),
  email          TEXT NOT NULL COLLATE NOCASE UNIQUE,
  display_name   TEXT NOT NULL DEFAULT '',
  role           TEXT NOT NULL CHECK (role IN ('tenant_admin','operator','viewer')),
  password_hash  TEXT,
  auth_provider  TEXT NOT NULL DEFAULT 'password' CHECK (auth_provider IN ('password','oidc')),
  totp_secret    TEXT,
  totp_pending   TEXT,
  totp_last_step INTEGER NOT NULL DEFAULT 0,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);
CREATE INDEX users_tenant ON users(tenant_id);

CREATE TABLE tenant_api_keys (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name       TEXT NOT NULL DEFAULT '',
  key_hash   TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
`;
