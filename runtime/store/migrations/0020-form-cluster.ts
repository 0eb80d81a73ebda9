/**
 * Submissions shared by the nodes of a cluster (docs/forms.md "In a cluster"): each node applies
 * the form stream into its own tables and records how far it has read (`form_stream_state`); a
 * delivery queued from the stream carries the key every node gives it (`cluster_key`, the
 * stream sequence of the message that queued it and the action), so every node holds the same
 * delivery once and the `webhook-id` is the same whichever node sends it.
 */
export const sql = `
CREATE TABLE form_stream_state (
  stream TEXT PRIMARY KEY,
  seq INTEGER NOT NULL
);
ALTER TABLE form_deliveries ADD COLUMN cluster_key TEXT;
CREATE UNIQUE INDEX form_deliveries_cluster_key ON form_deliveries (cluster_key) WHERE cluster_key IS NOT NULL;
`;
