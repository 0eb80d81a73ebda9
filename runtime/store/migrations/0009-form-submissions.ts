/**
 * Form submissions and their queued deliveries (docs/forms.md "Submissions"). Submissions are
 * data that visitors send, not configuration: node-local, never part of a plan. Their form is a
 * row; when the form row goes (REST, git or the cluster stream), its submissions, deliveries and
 * files go with it (runtime/forms/submissions/cleanup.ts).
 */
export const sql = `
CREATE TABLE form_submissions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id TEXT NOT NULL,
  form_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  fields TEXT NOT NULL,
  files TEXT NOT NULL DEFAULT '[]',
  file_bytes INTEGER NOT NULL DEFAULT 0,
  email TEXT,
  spam INTEGER NOT NULL DEFAULT 0,
  spam_reason TEXT,
  ip TEXT,
  user_agent TEXT,
  claimed_at INTEGER,
  claimed_by TEXT
);
CREATE INDEX form_submissions_form ON form_submissions (form_id, id);
CREATE INDEX form_submissions_files ON form_submissions (tenant_id) WHERE file_bytes > 0;
CREATE INDEX form_submissions_email ON form_submissions (form_id, email, created_at) WHERE email IS NOT NULL;

CREATE TABLE form_received_fields (
  form_id TEXT NOT NULL,
  name TEXT NOT NULL,
  first_seen INTEGER NOT NULL,
  PRIMARY KEY (form_id, name)
) WITHOUT ROWID;

CREATE TABLE form_usage (
  tenant_id TEXT NOT NULL,
  month TEXT NOT NULL,
  submissions INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, month)
) WITHOUT ROWID;

CREATE TABLE form_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  submission_id INTEGER NOT NULL REFERENCES form_submissions (id) ON DELETE CASCADE,
  form_id TEXT NOT NULL,
  action_id TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX form_deliveries_due ON form_deliveries (state, next_at);
CREATE INDEX form_deliveries_action ON form_deliveries (action_id, state);
CREATE INDEX form_deliveries_submission ON form_deliveries (submission_id);
`;
