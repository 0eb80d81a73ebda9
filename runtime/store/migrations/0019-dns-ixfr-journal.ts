/**
 * The IXFR journal (docs/dns.md "Incremental transfers", runtime/dns/ixfr-journal.ts): one row
 * per SOA serial step (`complete` 0: a plan too large to record; an IXFR across it gets the whole
 * zone), and per step the record-level difference of each zone it changed (`whole` 1: the zone
 * appeared or disappeared). Written inside the apply transaction that advances the serial, and
 * trimmed to the last `dns.axfr.journalSize` steps. `dns_ixfr_meta` holds a fingerprint of the
 * configuration the differences were worked out under; another one empties the journal.
 */
export const sql = `
CREATE TABLE dns_ixfr_step (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  from_serial INTEGER NOT NULL,
  to_serial   INTEGER NOT NULL,
  revision    TEXT NOT NULL,
  complete    INTEGER NOT NULL
);
CREATE TABLE dns_ixfr_diff (
  seq     INTEGER NOT NULL,
  zone    TEXT NOT NULL,
  whole   INTEGER NOT NULL,
  deleted TEXT NOT NULL,
  added   TEXT NOT NULL,
  PRIMARY KEY (zone, seq)
) WITHOUT ROWID;
CREATE TABLE dns_ixfr_meta (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  fingerprint TEXT NOT NULL
);
`;
