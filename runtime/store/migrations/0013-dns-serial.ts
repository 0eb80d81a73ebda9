/**
 * The SOA serial of the served zones (docs/dns.md "SOA serial"): one row, advanced inside the
 * apply transaction of every plan that changes what DNS serves, so it never goes back, across
 * restarts too. A new database starts at 1. A database that already holds state starts at the
 * current Unix time: serials used to be the snapshot build time in seconds, and secondaries that
 * hold such a serial must see the next one as newer (RFC 1982).
 */
export const sql = `
CREATE TABLE dns_zone_serial (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  serial   INTEGER NOT NULL,
  revision TEXT NOT NULL DEFAULT ''
);
INSERT INTO dns_zone_serial (id, serial)
  SELECT 1, CASE WHEN EXISTS (SELECT 1 FROM revisions) OR EXISTS (SELECT 1 FROM resources)
                 THEN CAST(strftime('%s', 'now') AS INTEGER) ELSE 1 END;
`;
