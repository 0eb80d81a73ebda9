/** The last window each `email_digest` action covered (docs/forms.md "Digests"), so a window is sent once. Node-local. */
export const sql = `
CREATE TABLE form_digest_runs (
  action_id TEXT PRIMARY KEY,
  window_end INTEGER NOT NULL,
  sent_at INTEGER NOT NULL,
  submissions INTEGER NOT NULL
) WITHOUT ROWID;
`;
