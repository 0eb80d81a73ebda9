/**
 * The persisted alert queue (docs/alerts.md "The queue"): every alert event waits here until each
 * target it was queued for delivered it or gave up, so a node killed with alerts pending sends
 * them after its restart. `cluster_id` names an event of the cluster (sent by one node: the one
 * that claims the id in KV `SVC_ALERTS`); `claimed` is 1 once this node holds that claim.
 */
export const sql = `
CREATE TABLE alert_queue (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  event      TEXT NOT NULL,
  cluster_id TEXT,
  claimed    INTEGER NOT NULL DEFAULT 0,
  queued_at  INTEGER NOT NULL
);
`;
