/**
 * The replay cache of signed RFC 2136 UPDATEs on a node without a cluster (docs/dns.md "TSIG",
 * runtime/dns/tsig-replay-store.ts): the SHA-256 of each accepted MAC per key, kept until its
 * signature can no longer verify (Time Signed + Fudge), so a restart does not forget it.
 */
export const sql = `
CREATE TABLE dns_tsig_replay (
  key        TEXT NOT NULL,
  mac_sha256 TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (key, mac_sha256)
) WITHOUT ROWID;
CREATE INDEX dns_tsig_replay_expiry ON dns_tsig_replay (expires_at);
`;
