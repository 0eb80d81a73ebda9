/**
 * Tables of the cluster part (docs/cluster.md):
 * - `cluster_applied`: one row per config-stream message this node has applied, keyed by stream
 *   sequence, with the plan revision (unique: a revision is applied once even if it was published
 *   twice). The highest seq is where a restarted node resumes.
 * - `cluster_outbox`: plans applied here and not yet acknowledged by the stream (bus down);
 *   published in order when the bus returns.
 */
export const sql = `
CREATE TABLE cluster_applied (
  seq        INTEGER PRIMARY KEY,
  revision   TEXT NOT NULL UNIQUE,
  origin_node TEXT NOT NULL,
  changes    INTEGER NOT NULL,
  applied_at INTEGER NOT NULL
);
CREATE TABLE cluster_outbox (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  revision   TEXT NOT NULL UNIQUE,
  body       TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
`;
