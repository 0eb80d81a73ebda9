import type { Config } from '../config/types.js';
import type { MemberRow, Row, ServiceRow } from '../../core/model/types.js';
import type { Plan } from '../../core/plan/types.js';
import { childrenOf, getRow, rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { txtRdata } from '../net/character-strings.js';
import type { TxtRecordRow } from '../ports/txt-records.js';
import { nameRules, unservedReason, type NameRules } from '../tenancy/names.js';
import { poolPartsOf, type GeoDeps } from './service-plan.js';
import { TYPE } from './wire-reply.js';
import { fqdn } from './zone-index.js';
import { isUnder } from './zone-records.js';

/**
 * One record of a zone difference: owner (lower-cased FQDN), type, TTL, record data, and the
 * tenant of the row it comes from (a tenant's IXFR holds only that tenant's records).
 */
export interface JournalRecord { owner: string; type: number; ttl: number; rdata: Buffer; tenant: string }

/**
 * How one served zone changed between two serials: the records deleted and added. `whole`: the
 * zone appeared or disappeared, so no difference can be given (an IXFR across it gets the zone).
 */
export interface ZoneDiff { zone: string; whole: boolean; deleted: JournalRecord[]; added: JournalRecord[] }

/**
 * Above this many changed rows or owner names a plan's differences are not recorded: the journal
 * notes a step without them, and an IXFR across it gets the whole zone (an import of thousands
 * of names is as large as the zone; RFC 1995 §4 lets a server answer with the zone instead).
 */
export const MAX_JOURNAL_NAMES = 5000;

/** Rows handled between two yields. */
const SLICE = 512;

/** Member addresses need no location: the geo databases are not read. */
const NO_GEO: GeoDeps = { city: undefined, asn: undefined, endpointLocations: {} };

const add = (m: Map<string, Set<string>>, k: string, id: string) => {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(id);
};
const remove = (m: Map<string, Set<string>>, k: string, id: string) => {
  const s = m.get(k);
  if (s?.delete(id) && s.size === 0) m.delete(k);
};

/**
 * Service ids by name and by pool, TXT row ids by name: where to look for the rows at a name
 * without reading every row. A superset is harmless (every candidate is checked against the
 * snapshot); `at` names the snapshot the maps were built or advanced for.
 */
export class NameMaps {
  at: Snapshot | undefined;
  readonly services = new Map<string, Set<string>>();
  readonly pools = new Map<string, Set<string>>();
  readonly txt = new Map<string, Set<string>>();

  /** Fills the maps from `s` (every row), yielding between slices. */
  *build(s: Snapshot): Generator<void, void> {
    this.at = undefined;
    this.services.clear(); this.pools.clear(); this.txt.clear();
    let n = 0;
    for (const r of rowsOf<ServiceRow>(s, 'service').values()) {
      if (++n % SLICE === 0) yield;
      this.put(r);
    }
    for (const r of rowsOf<TxtRecordRow>(s, 'txtrecord').values()) {
      if (++n % SLICE === 0) yield;
      this.put(r);
    }
    this.at = s;
  }

  /** Takes the maps `other` built (a build off to the side). */
  adopt(other: NameMaps): void {
    for (const k of ['services', 'pools', 'txt'] as const) {
      this[k].clear();
      for (const [n, ids] of other[k]) this[k].set(n, ids);
    }
    this.at = other.at;
  }

  /** Moves the maps on by `plan`, which made `next` from the snapshot they were at. */
  advance(plan: Plan, next: Snapshot): void {
    for (const c of plan.changes) {
      if (c.kind !== 'service' && c.kind !== 'txtrecord') continue;
      if (c.before) this.drop(c.before);
      if (c.after) this.put(c.after);
    }
    this.at = next;
  }

  private put(r: Row): void {
    if (r.kind === 'service') {
      const s = r as ServiceRow;
      add(this.services, fqdn(s.domain), s.id);
      if (s.poolId) add(this.pools, s.poolId, s.id);
    } else if (r.kind === 'txtrecord') add(this.txt, fqdn((r as TxtRecordRow).name), r.id);
  }

  private drop(r: Row): void {
    if (r.kind === 'service') {
      const s = r as ServiceRow;
      remove(this.services, fqdn(s.domain), s.id);
      if (s.poolId) remove(this.pools, s.poolId, s.id);
    } else if (r.kind === 'txtrecord') remove(this.txt, fqdn((r as TxtRecordRow).name), r.id);
  }
}

/** The ids a plan adds at each name and pool (its `after` rows): the maps do not hold them yet. */
class PlanRows {
  readonly services = new Map<string, Set<string>>();
  readonly pools = new Map<string, Set<string>>();
  readonly txt = new Map<string, Set<string>>();
  constructor(plan: Plan) {
    for (const c of plan.changes) {
      const r = c.after;
      if (!r) continue;
      if (r.kind === 'service') {
        const s = r as ServiceRow;
        add(this.services, fqdn(s.domain), s.id);
        if (s.poolId) add(this.pools, s.poolId, s.id);
      } else if (r.kind === 'txtrecord') add(this.txt, fqdn((r as TxtRecordRow).name), r.id);
    }
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * What the zone index (zone-index.ts) and the transfer's record list (zone-records.ts) make of
 * one owner name in one snapshot, worked out for that name alone: the served service and TXT rows
 * there (the same tenancy rules; where two rows claim a name, the last in storage order wins, as
 * in the index), and the zones it belongs to.
 */
class NameView {
  private readonly served = new Map<string, ServiceRow[]>();
  private readonly main: string | undefined;

  constructor(private readonly s: Snapshot, cfg: Config, private readonly rules: NameRules, private readonly maps: NameMaps, private readonly plan: PlanRows) {
    this.main = cfg.dns.domain ? fqdn(cfg.dns.domain) : undefined;
  }

  private candidates(kind: 'services' | 'pools' | 'txt', key: string): Set<string> {
    return new Set([...(this.maps[kind].get(key) ?? EMPTY), ...(this.plan[kind].get(key) ?? EMPTY)]);
  }

  /** The services of pool `pool` in this snapshot. */
  poolServices(pool: string): ServiceRow[] {
    const out: ServiceRow[] = [];
    for (const id of this.candidates('pools', pool)) {
      const r = getRow<ServiceRow>(this.s, 'service', id);
      if (r && r.poolId === pool) out.push(r);
    }
    return out;
  }

  /** The served services whose name is `name`, in storage order. */
  private servedAt(name: string): ServiceRow[] {
    let list = this.served.get(name);
    if (list) return list;
    list = [];
    for (const id of this.candidates('services', name)) {
      const r = getRow<ServiceRow>(this.s, 'service', id);
      if (r && fqdn(r.domain) === name && unservedReason(this.rules, r) === undefined) list.push(r);
    }
    if (list.length > 1) list = inStorageOrder(rowsOf<ServiceRow>(this.s, 'service'), list);
    this.served.set(name, list);
    return list;
  }

  private underMain(name: string): boolean {
    return this.main !== undefined && isUnder(name, this.main);
  }

  /** True when `name` is the apex of a served zone. */
  isZone(name: string): boolean {
    if (name === this.main) return true;
    return !this.underMain(name) && this.servedAt(name).length > 0;
  }

  /** The served zones `name` is at or under, longest first. */
  private zonesOver(name: string): string[] {
    const out: string[] = [];
    for (let n = name; ; ) {
      if (this.isZone(n)) out.push(n);
      const dot = n.indexOf('.');
      if (dot < 0 || dot === n.length - 1) return out;
      n = n.slice(dot + 1);
    }
  }

  /** The records at `name` by zone, as a transfer of each zone sends them. */
  records(name: string): Map<string, JournalRecord[]> {
    const out = new Map<string, JournalRecord[]>();
    const push = (zone: string, r: JournalRecord) => {
      let l = out.get(zone);
      if (!l) out.set(zone, (l = []));
      l.push(r);
    };
    const services = this.servedAt(name);
    const svc = services[services.length - 1];
    if (svc) {
      const zone = this.underMain(name) ? this.main! : name;
      const rows = svc.poolId ? childrenOf<MemberRow>(this.s, svc.poolId, 'member') : [];
      const seen = new Set<string>();
      for (const m of poolPartsOf(rows, [], NO_GEO).members) {
        if (seen.has(m.ip)) continue;
        seen.add(m.ip);
        push(zone, { owner: name, type: m.family === 4 ? TYPE.A : TYPE.AAAA, ttl: svc.ttl, rdata: m.rdata, tenant: svc.tenantId });
      }
    }
    const zones = this.zonesOver(name);
    if (zones.length === 0) return out;
    let txt: TxtRecordRow | undefined;
    for (const id of this.candidates('txt', name)) {
      const r = getRow<TxtRecordRow>(this.s, 'txtrecord', id);
      if (!r || fqdn(r.name) !== name) continue;
      if (unservedReason(this.rules, { id: r.id, name, domain: name, tenantId: r.tenantId, origin: r.origin }) !== undefined) continue;
      if (!txt) { txt = r; continue; }
      // two served rows at one name: the index keeps the later one in storage order
      const order = inStorageOrder(rowsOf<TxtRecordRow>(this.s, 'txtrecord'), [txt, r]);
      txt = order[order.length - 1];
    }
    if (txt) {
      const row = txt;
      for (const zone of zones) for (const v of row.values) push(zone, { owner: name, type: TYPE.TXT, ttl: row.ttl, rdata: txtRdata(v), tenant: row.tenantId });
    }
    return out;
  }
}

/** `rows` (a few rows of `table`) in the table's storage order. */
function inStorageOrder<T extends Row>(table: ReadonlyMap<string, T>, rows: T[]): T[] {
  const ids = new Set(rows.map((r) => r.id));
  const out: T[] = [];
  for (const [id, r] of table) if (ids.has(id)) out.push(r);
  return out;
}

/** The identity of a record in a difference (the tenant included: a record that changes hands is deleted and added). */
export const recordKey = (r: JournalRecord): string => `${r.owner}/${r.type}/${r.ttl}/${r.rdata.toString('hex')}/${r.tenant}`;

const byKey = (a: JournalRecord, b: JournalRecord) => { const x = recordKey(a); const y = recordKey(b); return x < y ? -1 : x > y ? 1 : 0; };

/** The owner names whose records `plan` may change (before and after), or undefined when more than MAX_JOURNAL_NAMES. */
function* changedNames(plan: Plan, views: NameView[]): Generator<void, Set<string> | undefined> {
  const names = new Set<string>();
  let n = 0;
  for (const c of plan.changes) {
    if (++n % SLICE === 0) yield;
    for (const r of [c.before, c.after]) {
      if (!r) continue;
      if (r.kind === 'service') names.add(fqdn((r as ServiceRow).domain));
      else if (r.kind === 'txtrecord') names.add(fqdn((r as TxtRecordRow).name));
      else if (r.kind === 'member') for (const v of views) for (const s of v.poolServices((r as MemberRow).poolId)) names.add(fqdn(s.domain));
    }
    if (names.size > MAX_JOURNAL_NAMES) return undefined;
  }
  return names;
}

/**
 * The record-level differences `plan` makes to every served zone, going from `prev` to `next`
 * (docs/dns.md "Incremental transfers"): worked out from the names of the rows it changes, never
 * by comparing whole zones, so the cost follows the plan. `maps` must be at `prev`. Deterministic:
 * the same plan on the same state gives the same differences on every node. Returns undefined
 * when the plan is too large to record (MAX_JOURNAL_NAMES). Zones without a change are left out.
 */
export function* planDiffSteps(plan: Plan, prev: Snapshot, next: Snapshot, cfg: Config, maps: NameMaps): Generator<void, ZoneDiff[] | undefined> {
  if (plan.changes.length > MAX_JOURNAL_NAMES) return undefined;
  const rules = nameRules(cfg);
  const planRows = new PlanRows(plan);
  const before = new NameView(prev, cfg, rules, maps, planRows);
  const after = new NameView(next, cfg, rules, maps, planRows);
  const names = yield* changedNames(plan, [before, after]);
  if (!names) return undefined;
  const diffs = new Map<string, ZoneDiff>();
  const diffOf = (zone: string) => {
    let d = diffs.get(zone);
    if (!d) diffs.set(zone, (d = { zone, whole: false, deleted: [], added: [] }));
    return d;
  };
  let n = 0;
  for (const name of [...names].sort()) {
    if (++n % 64 === 0) yield;
    if (before.isZone(name) !== after.isZone(name)) diffOf(name).whole = true;
    const old = before.records(name);
    const now = after.records(name);
    for (const zone of new Set([...old.keys(), ...now.keys()])) {
      const o = new Map((old.get(zone) ?? []).map((r) => [recordKey(r), r]));
      const a = new Map((now.get(zone) ?? []).map((r) => [recordKey(r), r]));
      for (const [k, r] of o) if (!a.has(k)) diffOf(zone).deleted.push(r);
      for (const [k, r] of a) if (!o.has(k)) diffOf(zone).added.push(r);
    }
  }
  const out = [...diffs.values()].sort((x, y) => (x.zone < y.zone ? -1 : x.zone > y.zone ? 1 : 0));
  for (const d of out) {
    if (d.whole) { d.deleted = []; d.added = []; continue; }
    d.deleted.sort(byKey);
    d.added.sort(byKey);
  }
  return out;
}
