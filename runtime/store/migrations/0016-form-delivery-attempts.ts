/**
 * The attempt history of form deliveries (docs/forms.md "Deliveries"): one row per attempt, made
 * when the worker takes the delivery and settled when the attempt ends (its time, duration, HTTP
 * status and error). Node-local, like the queue; deleted with its delivery (ON DELETE CASCADE,
 * `foreign_keys` is on). Deliveries queued before this table existed have no history: their
 * `attempts` count and last answer stay as they were.
 */
export const sql = `
CREATE TABLE form_delivery_attempts (
  delivery_id INTEGER NOT NULL REFERENCES form_deliveries (id) ON DELETE CASCADE,
  n INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  outcome TEXT NOT NULL DEFAULT 'sending',
  duration_ms INTEGER,
  status INTEGER,
  error TEXT,
  PRIMARY KEY (delivery_id, n)
) WITHOUT ROWID;
`;
