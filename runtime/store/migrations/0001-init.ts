/** Resource rows, health status, and the revision history. */
export const sql = `
CREATE TABLE resources (
  kind       TEXT NOT NULL,
  id         TEXT NOT NULL,
  tenant_id  TEXT NOT NULL DEFAULT 'default',
  data       TEXT NOT NULL,
  origin     TEXT NOT NULL CHECK (origin IN ('git','api')),
  revision   TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (kind, id)
);
CREATE INDEX resources_origin ON resources(origin);

CREATE TABLE health_status (
  pool_id      TEXT NOT NULL,
  ip_address   TEXT NOT NULL,
  healthy      INTEGER NOT NULL,
  score        REAL NOT NULL,
  last_checked INTEGER NOT NULL,
  rtt_ms       INTEGER NOT NULL DEFAULT 0,
  node         TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (pool_id, ip_address)
);

CREATE TABLE revisions (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  revision   TEXT NOT NULL,
  origin     TEXT NOT NULL,
  applied_at INTEGER NOT NULL,
  creates    INTEGER NOT NULL,
  updates    INTEGER NOT NULL,
  deletes    INTEGER NOT NULL,
  meta       TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX revisions_revision ON revisions(revision);

CREATE TABLE kv (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`;
