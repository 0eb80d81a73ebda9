/**
 * Tables of the gitops part. Applied revisions live in `revisions` (origin `git`) with the signer,
 * author, committer, message and SHA in `meta`, written in the same transaction as the rows.
 * `gitops_attempts` keeps every refused revision with its reason; `gitops_status` the controller's
 * last status so `gslbctl status` survives a restart.
 */
export const sql = `
CREATE INDEX revisions_origin ON revisions(origin, seq);

CREATE TABLE gitops_attempts (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  sha      TEXT NOT NULL,
  at       INTEGER NOT NULL,
  reason   TEXT NOT NULL,
  class    TEXT NOT NULL,
  message  TEXT NOT NULL,
  problems TEXT NOT NULL DEFAULT '[]',
  trigger  TEXT NOT NULL
);
CREATE INDEX gitops_attempts_sha ON gitops_attempts(sha);

CREATE TABLE gitops_status (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  data TEXT NOT NULL
);
`;
