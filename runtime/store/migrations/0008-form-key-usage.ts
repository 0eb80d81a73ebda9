/**
 * When each form-service API key was last used (docs/forms.md "Workspaces and API keys"): usage,
 * not configuration, so it is node-local and never part of a plan. Written at most once a minute
 * per key.
 */
export const sql = `
CREATE TABLE form_key_usage (
  key_id TEXT PRIMARY KEY,
  last_used_at INTEGER NOT NULL
);
`;
