import type { Config } from '../config/types.js';
import type { ServiceRow } from '../../core/model/types.js';
import { childrenOf, rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { planService, planStatic, poolParts, type GeoDeps, type PoolParts, type ServicePlan } from './service-plan.js';
import { nameToWire } from './wire-reply.js';
import { nameRules, unservedReason } from '../tenancy/names.js';
import { txtRdata } from '../net/character-strings.js';
import type { TxtRecordRow } from '../ports/txt-records.js';
import { buildCatalog, type Catalog } from './catalog-zone.js';

/** A zone the server is authoritative for: dns.domain, or a service domain outside it. */
export interface Zone {
  name: string;
  labels: number;
  /** SOA record data (mname, rname, serial, refresh, retry, expire, minimum) */
  soa: Buffer;
  /** negative-caching TTL (RFC 2308 §5): the SOA minimum */
  negativeTtl: number;
  /** NS record data, one per name server */
  ns: Buffer[];
}

/** The TXT record set at one name, encoded at index time. */
export interface TxtSet { ttl: number; rdata: Buffer[] }

/** What a query name resolves to. */
export type NameKind = 'service' | 'apex' | 'static' | 'empty' | 'nxdomain' | 'refused';

/** Result of `lookupName`; one instance is reused per server. */
export class NameMatch {
  kind: NameKind = 'refused';
  zone: Zone | undefined;
  plan: ServicePlan | undefined;
  /** the TXT records at the name, if any (whatever `kind` says about addresses) */
  txt: TxtSet | undefined;
}

/**
 * The DNS view of one Snapshot, built once per swap (and per geo database reload): exact service
 * names, served zones, empty non-terminals and the static endpoints' plan.
 */
export interface ZoneIndex {
  snapshot: Snapshot;
  geoGeneration: number;
  /** the SOA serial of every zone of this index */
  serial: number;
  services: Map<string, { plan: ServicePlan; zone: Zone }>;
  zones: Map<string, Zone>;
  /** names inside dns.domain that own nothing but have service names below them */
  emptyNonTerminals: Set<string>;
  main: Zone | undefined;
  staticPlan: ServicePlan | undefined;
  /** plans by service row, reused by the next index while the row and its pool's children are unchanged */
  plans: WeakMap<ServiceRow, PlanEntry>;
  /** service rows left out because their name is not theirs to serve, with why (runtime/tenancy/names.ts) */
  unserved: WeakMap<ServiceRow, string>;
  /**
   * How this index differs from the one it was built against (build number `from`; a number, so
   * indexes do not keep their predecessors alive), when it reused that one's plans: the names of
   * services whose plan was made afresh, and how many kept their plan (each at the same name).
   * Undefined after a geo reload or without a previous index. Read by the DNS workers' image
   * writer (index-image.ts), so a one-row write is not compared name by name.
   */
  delta: { from: number; changed: string[]; reused: number } | undefined;
  /**
   * This index's build number, unique in the process; an index that keeps its predecessor's maps
   * (a plan that touched no DNS table) keeps its number too, since it serves the same.
   */
  build: number;
  /** true when no two served services share a name (the delta's counts then hold) */
  uniqueNames: boolean;
  /** served TXT record sets by lower-cased FQDN (runtime/txt) */
  txt: Map<string, TxtSet>;
  /** TXT rows left out (name not theirs, or outside every served zone), with why */
  unservedTxt: WeakMap<TxtRecordRow, string>;
  /** the catalog zone (`dns.catalog.zone`, catalog-zone.ts) listing the other zones; it is in `zones` too */
  catalog: Catalog | undefined;
}

/**
 * What `lookupName` reads: a ZoneIndex, or a DNS worker's view of the shared index image
 * (index-view.ts), which decodes what a lookup asks for on first use.
 */
export interface NameIndex {
  services: { get(name: string): { plan: ServicePlan; zone: Zone } | undefined };
  zones: { get(name: string): Zone | undefined };
  emptyNonTerminals: { has(name: string): boolean };
  txt: { readonly size: number; get(name: string): TxtSet | undefined };
  main: Zone | undefined;
  staticPlan: ServicePlan | undefined;
}

/** Told once about each service or TXT row an index leaves out (when the row first appears left out). */
export type OnUnserved = (row: ServiceRow | TxtRecordRow, reason: string) => void;

interface PlanEntry { plan: ServicePlan; members: readonly unknown[]; rules: readonly unknown[] }

/** A name fully qualified and lower-cased, as the index keys it. */
export const fqdn = (n: string): string => (n.endsWith('.') ? n : `${n}.`).toLowerCase();
const labelCount = (n: string) => (n === '.' ? 0 : n.split('.').length - 1);

/**
 * The snapshot tables DNS answers and zone transfers depend on; snapshots share a table object
 * while it is unchanged. A plan that changes one of them advances the SOA serial (zone-serial.ts).
 */
export const DNS_TABLES = ['service', 'member', 'georule', 'txtrecord'] as const;

/** A served zone's SOA and NS data (dns.soa, dns.nsNames) at SOA serial `serial`. */
export function makeZone(name: string, cfg: Config, serial: number): Zone {
  const soaCfg = cfg.dns.soa;
  const domain = cfg.dns.domain ? fqdn(cfg.dns.domain) : name;
  const nsNames = (cfg.dns.nsNames && cfg.dns.nsNames.length > 0 ? cfg.dns.nsNames : [`ns1.${domain}`]).map(fqdn);
  const mname = nameToWire(soaCfg.mname ? fqdn(soaCfg.mname) : nsNames[0]!);
  const rname = nameToWire(soaCfg.rname ? fqdn(soaCfg.rname) : `hostmaster.${domain}`);
  const tail = Buffer.alloc(20);
  [serial, soaCfg.refresh, soaCfg.retry, soaCfg.expire, soaCfg.minimum].forEach((v, i) => tail.writeUInt32BE(v >>> 0, i * 4));
  return { name, labels: labelCount(name), soa: Buffer.concat([mname, rname, tail]), negativeTtl: soaCfg.minimum, ns: nsNames.map(nameToWire) };
}

const isUnder = (name: string, zone: string) => name === zone || name.endsWith(`.${zone}`);

/**
 * Builds the index of a snapshot, every zone with SOA serial `serial`. Plans of services whose row, members and geo rules are the very
 * same objects as in `prev` (snapshots share untouched rows) are reused, so a swap costs in
 * proportion to what changed. A name is served only for the tenant that owns it: a row whose
 * domain is delegated to another tenant, or a tenant row on a reserved name, is left out, and
 * `onUnserved` hears of it once (not again while the same row stays left out). Pure apart from
 * reading the geo databases for endpoint locations and calling `onUnserved`.
 */
export function buildZoneIndex(s: Snapshot, cfg: Config, geo: GeoDeps, geoGeneration: number, serial: number, prev?: ZoneIndex, onUnserved?: OnUnserved): ZoneIndex {
  const steps = zoneIndexSteps(s, cfg, geo, geoGeneration, serial, prev, onUnserved);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * From this many services on, the index a one-turn apply (a REST write) needs is built in slices
 * after the swap, while the previous one keeps answering (docs/dns.md "Large states"): a full
 * build of 100,000 services takes about half a second.
 */
export const SLICED_INDEX_MIN_SERVICES = 2000;

/** True when the index of `s` is built in slices after a one-turn apply. */
export const indexInSlices = (s: Snapshot): boolean => rowsOf(s, 'service').size >= SLICED_INDEX_MIN_SERVICES;

/** Build numbers of zone indexes (ZoneIndex.build). */
let builds = 0;

/** Services indexed between two yields of `zoneIndexSteps`. */
const SERVICES_PER_STEP = 256;

/**
 * `buildZoneIndex` as steps: the generator yields after every SERVICES_PER_STEP services and
 * returns the index, so a large index can be built between turns of the event loop (a large
 * apply prepares the next index this way before its swap, core/apply/apply-sliced.ts).
 * The same result as `buildZoneIndex`; the snapshot and `prev` are only read.
 */
export function* zoneIndexSteps(s: Snapshot, cfg: Config, geo: GeoDeps, geoGeneration: number, serial: number, prev?: ZoneIndex, onUnserved?: OnUnserved): Generator<void, ZoneIndex, void> {
  // A plan that touched no table DNS answers from (a user, an API key, a health check) keeps the
  // index and, with it, the SOA serial: secondaries see no change because there is none.
  if (prev && prev.geoGeneration === geoGeneration && prev.serial === serial && DNS_TABLES.every((k) => s.rows.get(k) === prev.snapshot.rows.get(k))) {
    return { ...prev, snapshot: s };
  }
  const reuse = prev && prev.geoGeneration === geoGeneration ? prev.plans : undefined;
  const plans = new WeakMap<ServiceRow, PlanEntry>();
  const zones = new Map<string, Zone>();
  const mainName = cfg.dns.domain ? fqdn(cfg.dns.domain) : undefined;
  const main = mainName ? makeZone(mainName, cfg, serial) : undefined;
  if (main) zones.set(main.name, main);
  const services = new Map<string, { plan: ServicePlan; zone: Zone }>();
  const emptyNonTerminals = new Set<string>();
  const names = nameRules(cfg);
  const unserved = new WeakMap<ServiceRow, string>();
  // the services of a pool share its part of the plan (members' record data, geo rules)
  const pools = new Map<string, { members: readonly unknown[]; rules: readonly unknown[]; parts: PoolParts }>();
  let n = 0;
  /** served services, those whose plan was reused, and the names of the others */
  let served = 0;
  let reused = 0;
  const changed: string[] = [];
  for (const svc of rowsOf<ServiceRow>(s, 'service').values()) {
    if (++n % SERVICES_PER_STEP === 0) yield;
    const why = unservedReason(names, svc);
    if (why !== undefined) {
      unserved.set(svc, why);
      if (!prev?.unserved.has(svc)) onUnserved?.(svc, why);
      continue;
    }
    const domain = fqdn(svc.domain);
    let zone: Zone;
    if (main && isUnder(domain, main.name)) {
      zone = main;
      // Every name between the service name and the apex exists (as an empty non-terminal).
      for (let n = domain.slice(domain.indexOf('.') + 1); n.length > main.name.length; n = n.slice(n.indexOf('.') + 1)) emptyNonTerminals.add(n);
    } else {
      zone = zones.get(domain) ?? makeZone(domain, cfg, serial);
      zones.set(domain, zone);
    }
    const members = svc.poolId ? childrenOf(s, svc.poolId, 'member') : [];
    const rules = svc.poolId ? childrenOf(s, svc.poolId, 'georule') : [];
    let entry = reuse?.get(svc);
    served++;
    if (!entry || entry.members !== members || entry.rules !== rules) {
      let pool = svc.poolId ? pools.get(svc.poolId) : undefined;
      if (svc.poolId && (!pool || pool.members !== members || pool.rules !== rules)) pools.set(svc.poolId, (pool = { members, rules, parts: poolParts(s, svc.poolId, geo) }));
      entry = { plan: planService(s, svc, geo, pool?.parts), members, rules };
      changed.push(domain);
    } else reused++;
    plans.set(svc, entry);
    services.set(domain, { plan: entry.plan, zone });
  }
  const { txt, unservedTxt } = indexTxt(s, zones, emptyNonTerminals, names, prev, onUnserved);
  const staticPlan = main ? planStatic(cfg, main.name, geo) : undefined;
  const delta = prev && reuse ? { from: prev.build, changed, reused } : undefined;
  // the catalog lists the zones above and is served (and notified, and transferred) as one of them
  const catalogName = cfg.dns.catalog?.zone ? fqdn(cfg.dns.catalog.zone) : undefined;
  const catalog = catalogName && !zones.has(catalogName) ? buildCatalog(catalogName, zones.keys(), serial, cfg.dns.soa) : undefined;
  if (catalog) zones.set(catalog.zone.name, catalog.zone);
  return { snapshot: s, geoGeneration, serial, services, zones, emptyNonTerminals, main, staticPlan, plans, unserved, txt, unservedTxt, delta, uniqueNames: served === services.size, build: ++builds, catalog };
}

/** The served zone `name` falls in (the longest), or undefined. */
function zoneOf(zones: ReadonlyMap<string, Zone>, name: string): Zone | undefined {
  for (let n = name; ; ) {
    const z = zones.get(n);
    if (z) return z;
    const dot = n.indexOf('.');
    if (dot < 0 || dot === n.length - 1) return undefined;
    n = n.slice(dot + 1);
  }
}

/**
 * The TXT record sets to serve: a row whose name is not its tenant's (the same rules as services)
 * or lies outside every served zone is left out and reported once. Names between a record and its
 * zone's apex become empty non-terminals.
 */
function indexTxt(s: Snapshot, zones: ReadonlyMap<string, Zone>, ents: Set<string>, names: ReturnType<typeof nameRules>, prev: ZoneIndex | undefined, onUnserved: OnUnserved | undefined) {
  const txt = new Map<string, TxtSet>();
  const unservedTxt = new WeakMap<TxtRecordRow, string>();
  for (const row of rowsOf<TxtRecordRow>(s, 'txtrecord').values()) {
    const name = fqdn(row.name);
    const zone = zoneOf(zones, name);
    const why = zone ? unservedReason(names, { id: row.id, name, domain: name, tenantId: row.tenantId, origin: row.origin }) : 'outside every served zone';
    if (why !== undefined || !zone) {
      unservedTxt.set(row, why ?? '');
      if (!prev?.unservedTxt.has(row)) onUnserved?.(row, why ?? '');
      continue;
    }
    const reused = prev?.snapshot.rows.get('txtrecord')?.get(row.id) === row ? prev.txt.get(name) : undefined;
    txt.set(name, reused ?? { ttl: row.ttl, rdata: row.values.map(txtRdata) });
    for (let n = name.slice(name.indexOf('.') + 1); n.length > zone.name.length; n = n.slice(n.indexOf('.') + 1)) ents.add(n);
  }
  return { txt, unservedTxt };
}

/**
 * Classifies a lower-cased query name: an exact service name; the apex of a served zone; a name in
 * dns.domain answered by the static endpoints (any name under it no service claims, when
 * `loadbalancer.endpoints` is set); an empty non-terminal (NODATA); NXDOMAIN inside a served zone;
 * REFUSED outside every served zone.
 */
export function lookupName(ix: NameIndex, name: string, out: NameMatch): NameMatch {
  const svc = ix.services.get(name);
  out.plan = undefined;
  out.txt = ix.txt.size === 0 ? undefined : ix.txt.get(name);
  if (svc) { out.kind = 'service'; out.zone = svc.zone; out.plan = svc.plan; return out; }
  let zone = ix.zones.get(name);
  if (zone) { out.kind = 'apex'; out.zone = zone; out.plan = zone === ix.main ? ix.staticPlan : undefined; return out; }
  for (let i = name.indexOf('.'); i >= 0 && i < name.length - 1; i = name.indexOf('.', i + 1)) {
    zone = ix.zones.get(name.slice(i + 1));
    if (!zone) continue;
    out.zone = zone;
    if (zone === ix.main && ix.staticPlan) { out.kind = 'static'; out.plan = ix.staticPlan; return out; }
    out.kind = out.txt !== undefined || ix.emptyNonTerminals.has(name) ? 'empty' : 'nxdomain';
    return out;
  }
  out.kind = 'refused';
  out.zone = undefined;
  return out;
}
