/**
 * Canary apply over config sync (docs/gitops.md "Canary apply", docs/cluster.md "Canary plans in
 * the stream"): one row per canary revision this node has seen in the config stream.
 * - `seq`, `spec`, `origin_node`: where the canary plan is in the stream, its canary nodes, bake
 *   time, thresholds and the revision an abort returns to (JSON), and the node that queued it;
 * - `applied_plan`, `applied_at`: on a canary node, the plan as this node applied it (rebased),
 *   which an abort takes back, and when; null on the other nodes;
 * - `phase`: `baking` until the decision, then `promoted` or `aborted`; `decision` is the decision
 *   message (JSON) and `decided_at` when this node recorded it.
 */
export const sql = `
CREATE TABLE cluster_canary (
  revision     TEXT PRIMARY KEY,
  seq          INTEGER NOT NULL,
  spec         TEXT NOT NULL,
  origin_node  TEXT NOT NULL,
  applied_plan TEXT,
  applied_at   INTEGER,
  phase        TEXT NOT NULL,
  decision     TEXT,
  decided_at   INTEGER
);
`;
