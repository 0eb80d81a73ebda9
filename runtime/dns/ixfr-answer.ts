import type { JournalRecord } from './ixfr-diff.js';
import type { Condensed } from './ixfr-journal.js';
import { TYPE } from './wire-reply.js';
import type { Zone } from './zone-index.js';
import { relativeWire, sortKey, type ZoneRecord } from './zone-records.js';

/** A zone's SOA record data with another serial (the serial is the first of its five trailing 32-bit fields). */
export function soaWithSerial(soa: Buffer, serial: number): Buffer {
  const b = Buffer.from(soa);
  b.writeUInt32BE(serial >>> 0, b.length - 20);
  return b;
}

/** The single SOA of a client that is already current (RFC 1995 §4). */
export function ixfrCurrent(zone: Zone): ZoneRecord[] {
  return [{ rel: Buffer.alloc(0), type: TYPE.SOA, ttl: 3600, rdata: zone.soa }];
}

/**
 * The records of an incremental answer (RFC 1995 §4), the steps from serial `from` condensed
 * into one difference (§5): the new SOA; the old SOA, the deleted records, the new SOA, the added
 * records; the new SOA again. Records in canonical owner order, then by type.
 */
export function ixfrRecords(zone: Zone, from: number, diff: Condensed): ZoneRecord[] {
  const apex = Buffer.alloc(0);
  const soa: ZoneRecord = { rel: apex, type: TYPE.SOA, ttl: 3600, rdata: zone.soa };
  const rels = new Map<string, Buffer>();
  const relOf = (owner: string) => {
    let rel = rels.get(owner);
    if (!rel) rels.set(owner, (rel = owner === zone.name ? apex : relativeWire(owner, zone.name)));
    return rel;
  };
  const ordered = (list: readonly JournalRecord[]): ZoneRecord[] => list
    .map((r) => ({ k: sortKey(r.owner, zone.name), r }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.r.type - b.r.type))
    .map(({ r }) => ({ rel: relOf(r.owner), type: r.type, ttl: r.ttl, rdata: r.rdata }));
  return [soa, { rel: apex, type: TYPE.SOA, ttl: 3600, rdata: soaWithSerial(zone.soa, from) }, ...ordered(diff.deleted), soa, ...ordered(diff.added), soa];
}
