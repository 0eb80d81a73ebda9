import { createHash } from 'node:crypto';
import { nameToWire } from '../net/dns-names.js';

/** Record types of a catalog zone (wire-reply.ts TYPE has no PTR). */
const SOA = 6;
const NS = 2;
const PTR = 12;
const TXT = 16;

/** One record of the catalog as a transfer sends it (zone-records.ts `ZoneRecord`, structurally). */
export interface CatalogRecord { rel: Buffer; type: number; ttl: number; rdata: Buffer }

/** The catalog as a served zone (zone-index.ts `Zone`, structurally). */
export interface CatalogApex { name: string; labels: number; soa: Buffer; negativeTtl: number; ns: Buffer[] }

/**
 * A catalog zone (RFC 9432, docs/dns.md "Catalog zone"): the apex, its records in transfer order,
 * and the record sets by owner name for queries.
 */
export interface Catalog {
  zone: CatalogApex;
  /** SOA, NS, the version TXT, one PTR per member zone in canonical order, SOA */
  records: CatalogRecord[];
  /** record sets by lower-cased owner name (FQDN): type → RDATA list */
  names: Map<string, Map<number, Buffer[]>>;
  /** `zones.<catalog>`: an empty non-terminal */
  zonesLabel: string;
}

/** TTL of the catalog's records other than the SOA and NS (RFC 9432 examples use 0: nobody resolves them). */
export const CATALOG_TTL = 0;

/**
 * The member's unique id (RFC 9432 §4.3.1): the SHA-1 of the zone name in lower-cased wire form,
 * in hex. Stable for a zone: it changes only when the zone's name does.
 */
export function memberId(zone: string): string {
  return createHash('sha1').update(nameToWire(zone.toLowerCase())).digest('hex');
}

/** Owner labels below the apex `apex` in wire form, without the terminating zero (empty for the apex). */
function relWire(name: string, apex: string): Buffer {
  const rel = name.slice(0, name.length - apex.length).replace(/\.$/, '');
  if (rel === '') return Buffer.alloc(0);
  const w = nameToWire(`${rel}.`);
  return w.subarray(0, w.length - 1);
}

const labelCount = (n: string) => (n === '.' ? 0 : n.split('.').length - 1);

/**
 * Builds the catalog `name` (a lower-cased FQDN) listing `members` (the served zones, FQDNs), with
 * SOA serial `serial` and the SOA timers of `dns.soa`: SOA `invalid. invalid.`, NS `invalid.`
 * (RFC 9432 §4.1 recommends it), TXT `version` "2" (§4.2.1), and a PTR at
 * `<memberId>.zones.<name>` naming each member (§4.3). Pure.
 */
export function buildCatalog(name: string, members: Iterable<string>, serial: number, soa: { refresh: number; retry: number; expire: number; minimum: number }): Catalog {
  const invalid = nameToWire('invalid.');
  const tail = Buffer.alloc(20);
  [serial, soa.refresh, soa.retry, soa.expire, soa.minimum].forEach((v, i) => tail.writeUInt32BE(v >>> 0, i * 4));
  const zone: CatalogApex = { name, labels: labelCount(name), soa: Buffer.concat([invalid, invalid, tail]), negativeTtl: soa.minimum, ns: [invalid] };
  const names = new Map<string, Map<number, Buffer[]>>();
  const put = (owner: string, type: number, rdata: Buffer) => {
    let sets = names.get(owner);
    if (!sets) names.set(owner, (sets = new Map()));
    let list = sets.get(type);
    if (!list) sets.set(type, (list = []));
    list.push(rdata);
  };
  const apex = Buffer.alloc(0);
  const records: CatalogRecord[] = [{ rel: apex, type: SOA, ttl: 3600, rdata: zone.soa }, { rel: apex, type: NS, ttl: 3600, rdata: invalid }];
  put(name, SOA, zone.soa);
  put(name, NS, invalid);
  const version = `version.${name}`;
  const two = Buffer.from([1, 0x32]);
  // canonical order (RFC 4034 §6.1): `version` sorts before `zones`, and the members by id (hex: octet order)
  records.push({ rel: relWire(version, name), type: TXT, ttl: CATALOG_TTL, rdata: two });
  put(version, TXT, two);
  const zonesLabel = `zones.${name}`;
  const ids = [...new Set(members)].filter((m) => m !== name).map((m) => ({ id: memberId(m), zone: m })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const m of ids) {
    const owner = `${m.id}.${zonesLabel}`;
    const rdata = nameToWire(m.zone);
    records.push({ rel: relWire(owner, name), type: PTR, ttl: CATALOG_TTL, rdata });
    put(owner, PTR, rdata);
  }
  records.push({ rel: apex, type: SOA, ttl: 3600, rdata: zone.soa });
  return { zone, records, names, zonesLabel };
}

/** The catalog's records for a transfer of `scope`: everything for the operator's scope, the apex SOA and NS for a tenant's. */
export function catalogRecords(c: Catalog, systemScope: boolean): CatalogRecord[] {
  if (systemScope) return c.records;
  const r = c.records;
  return [r[0]!, r[1]!, r[r.length - 1]!];
}

/**
 * True when the question name of the DNS message `req` is `suffix` or under it (`suffix`: a
 * lower-cased name in wire form). Reads the uncompressed question name only; anything malformed
 * is false. For DNS worker threads, which hand the catalog's queries to the main thread.
 */
export function questionUnder(req: Buffer, suffix: Buffer): boolean {
  if (req.length < 12 || req.readUInt16BE(4) !== 1) return false;
  let p = 12;
  for (;;) {
    if (p >= req.length) return false;
    const l = req[p]!;
    if (l === 0) break;
    if (l > 63) return false;
    p += l + 1;
  }
  const end = p + 1;
  const start = end - suffix.length;
  if (start < 12) return false;
  // the suffix must begin at a label boundary
  let at = 12;
  while (at < start) at += req[at]! + 1;
  if (at !== start) return false;
  for (let i = 0; i < suffix.length; i++) {
    let c = req[start + i]!;
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    if (c !== suffix[i]) return false;
  }
  return true;
}
