/**
 * What the delivery worker keeps besides the queue of 0009 (docs/forms.md "Deliveries"): the
 * answer of each delivery's last attempt and when it was sent, the event a delivery carries, and
 * each action's run of failures (an action that keeps failing is paused). Node-local, like the queue.
 */
export const sql = `
ALTER TABLE form_deliveries ADD COLUMN event TEXT NOT NULL DEFAULT 'submission.created';
ALTER TABLE form_deliveries ADD COLUMN last_status INTEGER;
ALTER TABLE form_deliveries ADD COLUMN sent_at INTEGER;

CREATE TABLE form_action_failures (
  action_id TEXT PRIMARY KEY,
  consecutive INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  paused_at INTEGER
) WITHOUT ROWID;
`;
