/**
 * Config sync (docs/cluster.md "Config sync"): an outbox row too large to write in one turn is
 * written in parts within the apply's transaction. `cluster_outbox.parts` is how many rows of
 * `cluster_outbox_parts` hold its message (0: the message is in `body`); their texts in `part`
 * order make the message.
 */
export const sql = `
ALTER TABLE cluster_outbox ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;
CREATE TABLE cluster_outbox_parts (
  revision TEXT NOT NULL,
  part     INTEGER NOT NULL,
  text     TEXT NOT NULL,
  PRIMARY KEY (revision, part)
);
`;
