import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Config } from '../config/types.js';
import type { ServiceRow } from '../../core/model/types.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import type { TxtRecordRow } from '../ports/txt-records.js';
import { TYPE } from './wire-reply.js';
import type { Zone, ZoneIndex } from './zone-index.js';
import { catalogRecords } from './catalog-zone.js';

/**
 * One record of a zone as a transfer sends it. `rel` is the owner's labels below the zone apex in
 * wire form without the terminating zero (empty for the apex); records of one owner share the
 * same `rel` object, so an encoder can point at the previous owner.
 */
export interface ZoneRecord { rel: Buffer; type: number; ttl: number; rdata: Buffer }

export const isUnder = (name: string, zone: string): boolean => name === zone || name.endsWith(`.${zone}`);

/** Owner labels below `zone` in wire form (no terminating zero); `name` is at or under `zone`. */
export function relativeWire(name: string, zone: string): Buffer {
  const rel = name.slice(0, name.length - zone.length).replace(/\.$/, '');
  if (rel === '') return Buffer.alloc(0);
  const labels = rel.split('.');
  const out = Buffer.alloc(labels.reduce((n, l) => n + Buffer.byteLength(l, 'latin1') + 1, 0));
  let o = 0;
  for (const l of labels) { out[o++] = l.length; o += out.write(l, o, 'latin1'); }
  return out;
}

/** Canonical order (RFC 4034 §6.1) of names under one apex: labels compared from the right. */
export const sortKey = (name: string, zone: string): string => name.slice(0, name.length - zone.length).replace(/\.$/, '').split('.').reverse().join('\u0000');

interface Owner { key: string; rel: Buffer; a: Buffer[]; aaaa: Buffer[]; aTtl: number; txt: Buffer[]; txtTtl: number }

/** Items (owners, rows, comparisons / 8) handled between two yields of the builder. */
const SLICE = 2048;

const byKey = (x: Owner, y: Owner) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0);

/**
 * Sorts owners by key in slices: sorted runs of SLICE owners, then pairwise merges, yielding
 * between slices of work, so a zone of 100,000 names never holds the event loop for long.
 */
function* sortOwners(list: Owner[]): Generator<void, Owner[]> {
  let runs: Owner[][] = [];
  for (let i = 0; i < list.length; i += SLICE) { runs.push(list.slice(i, i + SLICE).sort(byKey)); yield; }
  while (runs.length > 1) {
    const next: Owner[][] = [];
    for (let r = 0; r < runs.length; r += 2) {
      const a = runs[r]!;
      const b = runs[r + 1];
      if (!b) { next.push(a); continue; }
      const out: Owner[] = new Array<Owner>(a.length + b.length);
      let x = 0;
      let y = 0;
      let k = 0;
      while (x < a.length && y < b.length) {
        out[k++] = byKey(a[x]!, b[y]!) <= 0 ? a[x++]! : b[y++]!;
        if ((k & (SLICE * 8 - 1)) === 0) yield;
      }
      while (x < a.length) out[k++] = a[x++]!;
      while (y < b.length) out[k++] = b[y++]!;
      next.push(out);
      yield;
    }
    runs = next;
  }
  return runs[0] ?? [];
}

/**
 * Who a transfer is for: `SYSTEM_SCOPE` (the whole zone: the operator's key, or an unsigned
 * transfer where the operator allows one), or a tenant id (that tenant's own names only).
 */
export type TransferScope = string;
/** The scope of the operator's key: every record of the zone (runtime/auth RESERVED_TENANT_ID names the same server-wide owner). */
export const SYSTEM_SCOPE = 'system';

/**
 * The service ids and served TXT names of tenant `tenant` in an index's snapshot: what a
 * tenant-scoped transfer may hold. Yields between slices of rows.
 */
function* tenantRows(ix: ZoneIndex, tenant: string): Generator<void, { services: Set<string>; txt: Set<string> }> {
  const services = new Set<string>();
  const txt = new Set<string>();
  let n = 0;
  for (const r of rowsOf<ServiceRow>(ix.snapshot, 'service').values()) {
    if (++n % SLICE === 0) yield;
    if (r.tenantId === tenant) services.add(r.id);
  }
  for (const r of rowsOf<TxtRecordRow>(ix.snapshot, 'txtrecord').values()) {
    if (++n % SLICE === 0) yield;
    // a row the index left out (not its tenant's name) must not vouch for the set served there
    if (r.tenantId === tenant && !ix.unservedTxt.has(r)) txt.add((r.name.endsWith('.') ? r.name : `${r.name}.`).toLowerCase());
  }
  return { services, txt };
}

/**
 * The records of one served zone, in the order a transfer sends them (gslb-config-auth.md §2
 * `dns.axfr`): the SOA; the apex NS records (`dns.nsNames`); then every owner name in canonical
 * order with its A, AAAA and TXT records; the SOA again. A and AAAA: every service of the zone
 * with at least one enabled member of weight above 0 (health is ignored), one record per distinct
 * address, with the service TTL. TXT: the record sets the index serves (runtime/txt:
 * one row per name, its values distinct). Services and
 * text records the tenancy rules leave out (runtime/tenancy/names.ts) are left out here too.
 * With a tenant `scope`, only that tenant's services and TXT records are in it, between the
 * apex SOA and NS records (docs/dns.md "Who gets which records"); `SYSTEM_SCOPE` is everything.
 * Deterministic: the same index gives the same list. A generator that yields between slices of
 * work; `buildZoneRecords` runs it at once, `zoneRecords` a slice per event-loop turn.
 */
function* zoneRecordSteps(ix: ZoneIndex, zone: Zone, cfg: Config, scope: TransferScope): Generator<void, ZoneRecord[]> {
  // the catalog zone (catalog-zone.ts): a tenant's key gets its apex only, as for a zone it has no names in
  if (ix.catalog?.zone === zone) return catalogRecords(ix.catalog, scope === SYSTEM_SCOPE);
  const only = scope === SYSTEM_SCOPE ? undefined : yield* tenantRows(ix, scope);
  const owners = new Map<string, Owner>();
  const ownerOf = (name: string): Owner => {
    let o = owners.get(name);
    if (!o) owners.set(name, (o = { key: sortKey(name, zone.name), rel: relativeWire(name, zone.name), a: [], aaaa: [], aTtl: 0, txt: [], txtTtl: Infinity }));
    return o;
  };
  let n = 0;
  for (const [name, svc] of ix.services) {
    if (++n % SLICE === 0) yield;
    if (svc.zone !== zone || svc.plan.members.length === 0 || (only && !only.services.has(svc.plan.id))) continue;
    const o = ownerOf(name);
    o.aTtl = svc.plan.ttl;
    const seen = new Set<string>();
    for (const m of svc.plan.members) {
      if (seen.has(m.ip)) continue;
      seen.add(m.ip);
      (m.family === 4 ? o.a : o.aaaa).push(m.rdata);
    }
  }
  // the TXT record sets the index serves (runtime/txt; the same tenancy and zone rules as answers)
  for (const [name, set] of ix.txt) {
    if (++n % SLICE === 0) yield;
    if (!isUnder(name, zone.name) || (only && !only.txt.has(name))) continue;
    const o = ownerOf(name);
    o.txtTtl = set.ttl;
    o.txt.push(...set.rdata);
  }
  const apex: Buffer = Buffer.alloc(0);
  const out: ZoneRecord[] = [{ rel: apex, type: TYPE.SOA, ttl: 3600, rdata: zone.soa }];
  for (const ns of zone.ns) out.push({ rel: apex, type: TYPE.NS, ttl: 3600, rdata: ns });
  const sorted = yield* sortOwners([...owners.values()]);
  for (const o of sorted) {
    if (++n % SLICE === 0) yield;
    const rel = o.key === '' ? apex : o.rel;
    for (const rd of o.a) out.push({ rel, type: TYPE.A, ttl: o.aTtl, rdata: rd });
    for (const rd of o.aaaa) out.push({ rel, type: TYPE.AAAA, ttl: o.aTtl, rdata: rd });
    for (const rd of o.txt) out.push({ rel, type: TYPE.TXT, ttl: o.txtTtl, rdata: rd });
  }
  out.push({ rel: apex, type: TYPE.SOA, ttl: 3600, rdata: zone.soa });
  return out;
}

/** The records of one served zone for `scope` (see `zoneRecordSteps`), built at once. */
export function buildZoneRecords(ix: ZoneIndex, zone: Zone, cfg: Config, scope: TransferScope = SYSTEM_SCOPE): ZoneRecord[] {
  const g = zoneRecordSteps(ix, zone, cfg, scope);
  for (;;) {
    const r = g.next();
    if (r.done) return r.value;
  }
}

const cache = new WeakMap<Zone, Map<TransferScope, Promise<ZoneRecord[]>>>();

/**
 * The records of one served zone, built a slice per event-loop turn (so UDP answers keep flowing
 * while a large zone is prepared) and kept per Zone object: an index rebuilds its zones (with the
 * next serial) whenever a DNS table changes, so a zone object stands for one content, and later
 * transfers at the same serial and for the same scope, concurrent ones included, reuse the list
 * and send the same bytes.
 */
export function zoneRecords(ix: ZoneIndex, zone: Zone, cfg: Config, scope: TransferScope = SYSTEM_SCOPE): Promise<ZoneRecord[]> {
  let byScope = cache.get(zone);
  if (!byScope) cache.set(zone, (byScope = new Map()));
  let p = byScope.get(scope);
  if (!p) {
    p = (async () => {
      const g = zoneRecordSteps(ix, zone, cfg, scope);
      for (;;) {
        const r = g.next();
        if (r.done) return r.value;
        await nextTurn();
      }
    })();
    byScope.set(scope, p);
  }
  return p;
}
