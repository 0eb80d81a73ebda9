import type { GeoRuleRow, MemberRow, ServiceRow } from '../../core/model/types.js';
import { childrenOf, rowsOf } from '../../core/snapshot/snapshot.js';
import { runAtOnce } from '../../core/apply/slicer.js';
import type { ServicePlan } from './service-plan.js';
import type { Zone, ZoneIndex } from './zone-index.js';

/**
 * The zone index as the DNS workers read it (docs/dns.md "Workers"): a shared, versioned,
 * read-only encoding the main thread writes once per apply and every worker reads in place.
 *
 * Names (service, zone apex, empty non-terminal, TXT) fall into NAME_SHARDS shards by a hash of
 * the name, and the pools the services answer from into POOL_SHARDS shards by pool id. A shard is
 * a SharedArrayBuffer holding the UTF-8 JSON array of its entries; it is never written again once
 * posted: a change writes a new buffer for each shard it touches, so a one-row write costs one
 * shard, not the whole table. A worker decodes a shard on the first query that needs it and keeps
 * what it decoded (plans included) until that shard is replaced (index-view.ts).
 *
 * An entry holds what a plan is made from, not the plan: the worker builds plans with its own geo
 * databases, as the main thread does, so a database reload needs no new image.
 */

/**
 * Shards per image. Small shards keep a one-row write small (about 12 names a shard at 100,000
 * services) and a worker's decoding close to what its queries touch; an empty shard costs a null.
 */
export const NAME_SHARDS = 8192;
export const POOL_SHARDS = 2048;

/** FNV-1a of a string's UTF-16 code units, reduced to `shards` (a power of two). */
export function shardOf(key: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) & (shards - 1);
}

/** What a service answers from: the ServiceRow fields a plan is made of. */
export type ServiceFields = Pick<ServiceRow, 'id' | 'name' | 'domain' | 'poolId' | 'ttl' | 'algorithm' | 'chain' | 'whenAllUnhealthy' | 'asnRules'>;

/**
 * One name of a name shard. `s`: the service served at the name; `z`: its zone (the zone apex it
 * falls in); `a`: the name is the apex of a served zone; `e`: an empty non-terminal; `t`: the TXT
 * set at the name (TTL and each record's data, base64).
 */
export interface NameEntry { n: string; s?: ServiceFields; z?: string; a?: 1; e?: 1; t?: [ttl: number, rdata: string[]] }

/** A member as plans read it. */
export type MemberFields = Pick<MemberRow, 'ipAddress' | 'enabled' | 'weight' | 'priority' | 'rumUrl'>;

/**
 * One pool of a pool shard: its members (in storage order) and geo rules, as plans read them.
 * Objects, not tuples: a field a row lacks stays absent (JSON would turn it into null in an array,
 * and a plan reads the two differently).
 */
export interface PoolEntry {
  p: string;
  m: MemberFields[];
  g: Pick<GeoRuleRow, 'cidr' | 'endpoint'>[];
}

/** A shard change: its number and its new buffer (null: the shard is empty now). */
export type ShardUpdate = [shard: number, buffer: SharedArrayBuffer | null];

/**
 * What a worker is told: the shards that changed (all of them in a full image), the SOA serial of
 * every zone, and how many names have TXT records (0 lets lookups skip them).
 */
export interface IndexImage { names: ShardUpdate[]; pools: ShardUpdate[]; serial: number; txtNames: number; full: boolean }

/** Per pool: how many served services answer from it, and the children arrays its entry was made from (snapshots share them while unchanged). */
interface PoolFacts { refs: number; members: readonly unknown[]; rules: readonly unknown[] }

/** A computed, not yet committed, image: the pools' new facts and the new texts of the touched shards. */
export interface PendingImage {
  ix: ZoneIndex;
  /** service names compared (all of them unless the index's delta applied) */
  compared: number;
  /** pools whose facts change (undefined: no longer served) */
  pools: Map<string, PoolFacts | undefined>;
  nameShards: Map<number, Map<string, string>>;
  poolShards: Map<number, Map<string, string>>;
}

/** A pending image with its shards written: what the workers are told (`image`), and what `commit` keeps. */
export interface SealedImage {
  pending: PendingImage;
  /** the committed index it was computed against */
  base: ZoneIndex | undefined;
  names: [shard: number, texts: Map<string, string>, buffer: SharedArrayBuffer | null][];
  pools: [shard: number, texts: Map<string, string>, buffer: SharedArrayBuffer | null][];
  image: IndexImage;
}

/** What the first image is compared with. */
const EMPTY_INDEX = { services: new Map(), zones: new Map(), emptyNonTerminals: new Set(), txt: new Map(), uniqueNames: true, build: -1 } as unknown as ZoneIndex;

/** Keys visited between two yields of `diffSteps`. */
const KEYS_PER_STEP = 1024;

const b64 = (b: Buffer) => b.toString('base64');

function serviceFields(r: ServiceRow): ServiceFields {
  return { id: r.id, name: r.name, domain: r.domain, poolId: r.poolId, ttl: r.ttl, algorithm: r.algorithm, chain: r.chain, whenAllUnhealthy: r.whenAllUnhealthy, asnRules: r.asnRules };
}

/** The entry of `name` in `ix`, as JSON text; undefined when the index does not hold the name. */
function nameText(ix: ZoneIndex, name: string): string | undefined {
  const svc = ix.services.get(name);
  const apex = ix.zones.has(name);
  const ent = ix.emptyNonTerminals.has(name);
  const txt = ix.txt.get(name);
  if (!svc && !apex && !ent && !txt) return undefined;
  const e: NameEntry = { n: name };
  if (svc) {
    const row = rowsOf<ServiceRow>(ix.snapshot, 'service').get(svc.plan.id);
    if (row) { e.s = serviceFields(row); e.z = svc.zone.name; }
  }
  if (apex) e.a = 1;
  if (ent) e.e = 1;
  if (txt) e.t = [txt.ttl, txt.rdata.map(b64)];
  return JSON.stringify(e);
}

function poolText(id: string, members: readonly MemberRow[], rules: readonly GeoRuleRow[]): string {
  const e: PoolEntry = {
    p: id,
    m: members.map((m): MemberFields => ({ ipAddress: m.ipAddress, enabled: m.enabled, weight: m.weight, priority: m.priority, rumUrl: m.rumUrl })),
    g: rules.map((r) => ({ cidr: r.cidr, endpoint: r.endpoint })),
  };
  return JSON.stringify(e);
}

/** Writes a shard's entries (in name order, so equal contents give equal bytes) to a new shared buffer; null when empty. */
function shardBuffer(texts: Map<string, string>): SharedArrayBuffer | null {
  if (texts.size === 0) return null;
  const json = `[${[...texts.keys()].sort().map((k) => texts.get(k)!).join(',')}]`;
  const sab = new SharedArrayBuffer(Buffer.byteLength(json));
  Buffer.from(sab).write(json);
  return sab;
}

/**
 * Keeps the image the workers read in step with the main thread's zone index. `diffSteps` compares
 * an index with the one last committed and returns the pending image, `sealSteps` writes its
 * touched shards to new buffers (both in steps, for large indexes), and `commit` makes it the
 * committed image; `full` is every shard (a worker's start, a resync). Only the main thread
 * writes; a buffer is never written again once made.
 */
export class IndexImageWriter {
  private readonly poolFacts = new Map<string, PoolFacts>();
  private readonly nameTexts: Map<string, string>[] = Array.from({ length: NAME_SHARDS }, () => new Map());
  private readonly poolTexts: Map<string, string>[] = Array.from({ length: POOL_SHARDS }, () => new Map());
  private readonly nameBufs: (SharedArrayBuffer | null)[] = new Array<SharedArrayBuffer | null>(NAME_SHARDS).fill(null);
  private readonly poolBufs: (SharedArrayBuffer | null)[] = new Array<SharedArrayBuffer | null>(POOL_SHARDS).fill(null);
  private serial = 0;
  private txtNames = 0;
  /** the index last committed */
  last: ZoneIndex | undefined;

  /** True when `ix` serves what the last committed index served (no table DNS reads changed, same serial). */
  unchanged(ix: ZoneIndex): boolean {
    const l = this.last;
    return l !== undefined && l.services === ix.services && l.zones === ix.zones && l.txt === ix.txt && l.emptyNonTerminals === ix.emptyNonTerminals && l.serial === ix.serial;
  }

  /**
   * The image of `ix` against the committed one, as steps (yields every KEYS_PER_STEP keys). It
   * compares the two indexes, not their rows: a name whose plan, zone, TXT set and flags are the
   * very objects of the committed index (an index reuses the plans of unchanged services) is
   * skipped without allocating; for the others the entry's text is made, and its shard gets a new
   * buffer only when the text differs (a plan rebuilt for a member change of its pool leaves its
   * name's shard as it was). The pools looked at are those of the plans that changed: a member or
   * geo rule change rebuilds the plans of its pool's services, so their pool is among them.
   */
  *diffSteps(ix: ZoneIndex): Generator<void, PendingImage, void> {
    const last = this.last ?? EMPTY_INDEX;
    const changed = new Set<string>();
    /** served services added to (+) or taken from (-) each pool by the changed names */
    const refs = new Map<string, number>();
    const ref = (poolId: string | null, d: number) => { if (poolId !== null) refs.set(poolId, (refs.get(poolId) ?? 0) + d); };
    let k = 0;
    // With the index's own account of what it rebuilt against the committed one (ZoneIndex.delta),
    // only those services are compared; else every name of both.
    const d = ix.delta;
    const fast = d !== undefined && this.last !== undefined && d.from === this.last.build && ix.uniqueNames && this.last.uniqueNames;
    /** names of `last` that `ix` still has: when all of them, the scan for removed ones is skipped */
    let kept = fast ? d.reused : 0;
    let compared = 0;
    const service = (n: string, e: { plan: ServicePlan; zone: Zone }) => {
      compared++;
      const was = last.services.get(n);
      if (was) kept++;
      if (was && was.plan === e.plan && was.zone.name === e.zone.name) return;
      changed.add(n);
      ref(e.plan.poolId, 1);
      if (was) ref(was.plan.poolId, -1);
    };
    if (fast) {
      for (const n of d.changed) { if (++k % KEYS_PER_STEP === 0) yield; service(n, ix.services.get(n)!); }
    } else {
      for (const [n, e] of ix.services) { if (++k % KEYS_PER_STEP === 0) yield; service(n, e); }
    }
    if (kept < last.services.size) {
      for (const [n, e] of last.services) {
        if (++k % KEYS_PER_STEP === 0) yield;
        if (!ix.services.has(n)) { changed.add(n); ref(e.plan.poolId, -1); }
      }
    }
    const keys = function* <K>(a: { keys(): IterableIterator<K>; has(k: K): boolean }, b: { has(k: K): boolean }) {
      for (const n of a.keys()) { if (++k % KEYS_PER_STEP === 0) yield; if (!b.has(n)) changed.add(n as string); }
    };
    if (!fast) {
      yield* keys(ix.zones, last.zones);
      yield* keys(last.zones, ix.zones);
      yield* keys(ix.emptyNonTerminals, last.emptyNonTerminals);
      yield* keys(last.emptyNonTerminals, ix.emptyNonTerminals);
    }
    for (const [n, t] of ix.txt) { if (++k % KEYS_PER_STEP === 0) yield; if (last.txt.get(n) !== t) changed.add(n); }
    yield* keys(last.txt, ix.txt);
    if (fast) {
      // zone apexes are service names (or dns.domain), and empty non-terminals the names between a
      // service or TXT name and its apex: only those of the changed names can have changed
      for (const n of [...changed]) {
        for (let i = n.indexOf('.'); i >= 0 && i < n.length - 1; i = n.indexOf('.', i + 1)) changed.add(n.slice(i + 1));
      }
    }
    const nameShards = new Map<number, Map<string, string>>();
    const edit = (shards: Map<number, Map<string, string>>, texts: Map<string, string>[], key: string, n: number, text: string | undefined) => {
      const s = shardOf(key, n);
      if (texts[s]!.get(key) === text) return;
      let m = shards.get(s);
      if (!m) shards.set(s, (m = new Map(texts[s])));
      if (text === undefined) m.delete(key); else m.set(key, text);
    };
    for (const n of changed) {
      if (++k % KEYS_PER_STEP === 0) yield;
      edit(nameShards, this.nameTexts, n, NAME_SHARDS, nameText(ix, n));
    }
    // every pool of a changed plan (old or new) is in `refs`: its facts against the ones committed
    const pools = new Map<string, PoolFacts | undefined>();
    const poolShards = new Map<number, Map<string, string>>();
    for (const [p, d] of refs) {
      if (++k % KEYS_PER_STEP === 0) yield;
      const was = this.poolFacts.get(p);
      const count = (was?.refs ?? 0) + d;
      if (count <= 0) {
        if (was) { pools.set(p, undefined); edit(poolShards, this.poolTexts, p, POOL_SHARDS, undefined); }
        continue;
      }
      const members = childrenOf<MemberRow>(ix.snapshot, p, 'member');
      const rules = childrenOf<GeoRuleRow>(ix.snapshot, p, 'georule');
      pools.set(p, { refs: count, members, rules });
      if (was && was.members === members && was.rules === rules) continue;
      edit(poolShards, this.poolTexts, p, POOL_SHARDS, poolText(p, members, rules));
    }
    return { ix, compared, pools, nameShards, poolShards };
  }

  /** The sealed image of `ix` against the committed one: `diffSteps` then `sealSteps`, as steps. */
  *imageSteps(ix: ZoneIndex): Generator<void, SealedImage, void> {
    return yield* this.sealSteps(yield* this.diffSteps(ix));
  }

  /** `imageSteps` all at once. */
  image(ix: ZoneIndex): SealedImage {
    return runAtOnce(this.imageSteps(ix));
  }

  /**
   * Writes the touched shards of a pending image to new shared buffers (in steps: yields every 64
   * shards). The writer's state is unchanged until `commit`, so a sealed image that is never
   * committed (a large apply that failed) costs nothing.
   */
  *sealSteps(p: PendingImage): Generator<void, SealedImage, void> {
    const write = function* (shards: Map<number, Map<string, string>>, out: [number, Map<string, string>, SharedArrayBuffer | null][]) {
      for (const [s, m] of shards) {
        out.push([s, m, shardBuffer(m)]);
        if (out.length % 64 === 0) yield;
      }
    };
    const names: SealedImage['names'] = [];
    const pools: SealedImage['pools'] = [];
    yield* write(p.nameShards, names);
    yield* write(p.poolShards, pools);
    const image: IndexImage = { names: names.map(([s, , b]) => [s, b]), pools: pools.map(([s, , b]) => [s, b]), serial: p.ix.serial, txtNames: p.ix.txt.size, full: false };
    return { pending: p, base: this.last, names, pools, image };
  }

  /** True when a sealed image was made against the image committed now (else it must be made again). */
  fits(s: SealedImage): boolean {
    return s.base === this.last;
  }

  /** Makes a sealed image the committed one (`fits` must hold). */
  commit(sealed: SealedImage): void {
    for (const [s, m, b] of sealed.names) { this.nameTexts[s] = m; this.nameBufs[s] = b; }
    for (const [s, m, b] of sealed.pools) { this.poolTexts[s] = m; this.poolBufs[s] = b; }
    const p = sealed.pending;
    for (const [id, f] of p.pools) { if (f) this.poolFacts.set(id, f); else this.poolFacts.delete(id); }
    this.serial = p.ix.serial;
    this.txtNames = p.ix.txt.size;
    this.last = p.ix;
  }

  /** Every non-empty shard of the committed image. */
  full(): IndexImage {
    const all = (bufs: (SharedArrayBuffer | null)[]) => bufs.flatMap((b, s): ShardUpdate[] => (b ? [[s, b]] : []));
    return { names: all(this.nameBufs), pools: all(this.poolBufs), serial: this.serial, txtNames: this.txtNames, full: true };
  }
}
