/**
 * Tables of the alerts part: the runtime mail settings (gslb-config-auth.md §2 "Mail settings").
 * One row at most (id = 1). `password` holds a SecretBox value (`gcm1:…` or `plain:…`), never a
 * bare password; NULL means none stored.
 */
export const sql = `
CREATE TABLE smtp_settings (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  host       TEXT NOT NULL,
  port       INTEGER NOT NULL,
  from_addr  TEXT NOT NULL DEFAULT '',
  to_json    TEXT NOT NULL DEFAULT '[]',
  username   TEXT NOT NULL DEFAULT '',
  password   TEXT,
  tls        INTEGER NOT NULL DEFAULT 0,
  start_tls  INTEGER NOT NULL DEFAULT 1,
  enabled    INTEGER NOT NULL DEFAULT 1,
  updated_at INTEGER NOT NULL
);
`;
