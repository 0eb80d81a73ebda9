import type { GeoRuleRow, MemberRow, ServiceRow } from '../model/types.js';
import { childrenOf, rowsOf } from '../snapshot/snapshot.js';
import type { ServicePlan } from './service-plan.js';
import type { TxtSet, ZoneIndex } from './zone-index.js';

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

export const NAME_SHARDS = 1024;
export const POOL_SHARDS = 256;

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

/** One pool of a pool shard: its members (in storage order) and geo rules, as plans read them. */
export interface PoolEntry {
  p: string;
  m: [ip: string, enabled: 0 | 1, weight: number, priority: number, rumUrl: string | null][];
  g: [cidr: string, endpoint: string][];
}

/** A shard change: its number and its new buffer (null: the shard is empty now). */
export type ShardUpdate = [shard: number, buffer: SharedArrayBuffer | null];

/**
 * What a worker is told: the shards that changed (all of them in a full image), the SOA serial of
 * every zone, and how many names have TXT records (0 lets lookups skip them).
 */
export interface IndexImage { names: ShardUpdate[]; pools: ShardUpdate[]; serial: number; txtNames: number; full: boolean }

/** Per name, what its entry was made from (identity compared: the index reuses unchanged plans and TXT sets). */
interface NameFacts { plan: ServicePlan | undefined; zone: string | undefined; apex: boolean; ent: boolean; txt: TxtSet | undefined }
/** Per pool, the children arrays its entry was made from (snapshots share them while unchanged). */
interface PoolFacts { members: readonly unknown[]; rules: readonly unknown[] }

/** A computed, not yet committed, image: the next facts and the new texts of the touched shards. */
export interface PendingImage {
  ix: ZoneIndex;
  names: Map<string, NameFacts>;
  pools: Map<string, PoolFacts>;
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

/** Keys visited between two yields of `diffSteps`. */
const KEYS_PER_STEP = 1024;

const b64 = (b: Buffer) => b.toString('base64');

function serviceFields(r: ServiceRow): ServiceFields {
  return { id: r.id, name: r.name, domain: r.domain, poolId: r.poolId, ttl: r.ttl, algorithm: r.algorithm, chain: r.chain, whenAllUnhealthy: r.whenAllUnhealthy, asnRules: r.asnRules };
}

function nameText(ix: ZoneIndex, name: string, f: NameFacts): string {
  const e: NameEntry = { n: name };
  if (f.plan) {
    const row = rowsOf<ServiceRow>(ix.snapshot, 'service').get(f.plan.id);
    if (row) { e.s = serviceFields(row); e.z = f.zone!; }
  }
  if (f.apex) e.a = 1;
  if (f.ent) e.e = 1;
  if (f.txt) e.t = [f.txt.ttl, f.txt.rdata.map(b64)];
  return JSON.stringify(e);
}

function poolText(id: string, members: readonly MemberRow[], rules: readonly GeoRuleRow[]): string {
  const e: PoolEntry = {
    p: id,
    m: members.map((m) => [m.ipAddress, m.enabled ? 1 : 0, m.weight, m.priority, m.rumUrl]),
    g: rules.map((r) => [r.cidr, r.endpoint]),
  };
  return JSON.stringify(e);
}

const sameFacts = (a: NameFacts, b: NameFacts) => a.plan === b.plan && a.zone === b.zone && a.apex === b.apex && a.ent === b.ent && a.txt === b.txt;

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
  private facts = new Map<string, NameFacts>();
  private poolFacts = new Map<string, PoolFacts>();
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

  /** `diffSteps` all at once. */
  diff(ix: ZoneIndex): PendingImage {
    const steps = this.diffSteps(ix);
    for (;;) { const r = steps.next(); if (r.done) return r.value; }
  }

  /**
   * The image of `ix` against the committed one, as steps (yields every KEYS_PER_STEP keys). A name
   * whose facts are the same objects as before keeps its text; one whose facts changed gets a new
   * text, and its shard a new buffer only when that text differs (a plan rebuilt for a member
   * change of its pool leaves its name's shard as it was: the pool's shard changes).
   */
  *diffSteps(ix: ZoneIndex): Generator<void, PendingImage, void> {
    const names = new Map<string, NameFacts>();
    const at = (n: string) => {
      let f = names.get(n);
      if (!f) names.set(n, (f = { plan: undefined, zone: undefined, apex: false, ent: false, txt: undefined }));
      return f;
    };
    const pools = new Map<string, PoolFacts>();
    let k = 0;
    for (const [n, { plan, zone }] of ix.services) {
      if (++k % KEYS_PER_STEP === 0) yield;
      const f = at(n);
      f.plan = plan;
      f.zone = zone.name;
      const p = plan.poolId;
      if (p !== null && !pools.has(p)) pools.set(p, { members: childrenOf(ix.snapshot, p, 'member'), rules: childrenOf(ix.snapshot, p, 'georule') });
    }
    for (const n of ix.zones.keys()) at(n).apex = true;
    for (const n of ix.emptyNonTerminals) { if (++k % KEYS_PER_STEP === 0) yield; at(n).ent = true; }
    for (const [n, t] of ix.txt) { if (++k % KEYS_PER_STEP === 0) yield; at(n).txt = t; }
    const nameShards = new Map<number, Map<string, string>>();
    const edit = (shards: Map<number, Map<string, string>>, texts: Map<string, string>[], key: string, n: number, text: string | undefined) => {
      const s = shardOf(key, n);
      let m = shards.get(s);
      if (!m) shards.set(s, (m = new Map(texts[s])));
      if (text === undefined) m.delete(key); else m.set(key, text);
    };
    for (const [n, f] of names) {
      if (++k % KEYS_PER_STEP === 0) yield;
      const was = this.facts.get(n);
      if (was && sameFacts(was, f)) continue;
      const text = nameText(ix, n, f);
      if (this.nameTexts[shardOf(n, NAME_SHARDS)]!.get(n) !== text) edit(nameShards, this.nameTexts, n, NAME_SHARDS, text);
    }
    for (const n of this.facts.keys()) {
      if (++k % KEYS_PER_STEP === 0) yield;
      if (!names.has(n)) edit(nameShards, this.nameTexts, n, NAME_SHARDS, undefined);
    }
    const poolShards = new Map<number, Map<string, string>>();
    for (const [p, f] of pools) {
      if (++k % KEYS_PER_STEP === 0) yield;
      const was = this.poolFacts.get(p);
      if (was && was.members === f.members && was.rules === f.rules) continue;
      const text = poolText(p, f.members as MemberRow[], f.rules as GeoRuleRow[]);
      if (this.poolTexts[shardOf(p, POOL_SHARDS)]!.get(p) !== text) edit(poolShards, this.poolTexts, p, POOL_SHARDS, text);
    }
    for (const p of this.poolFacts.keys()) if (!pools.has(p)) edit(poolShards, this.poolTexts, p, POOL_SHARDS, undefined);
    return { ix, names, pools, nameShards, poolShards };
  }

  /** `sealSteps` all at once. */
  seal(p: PendingImage): SealedImage {
    const steps = this.sealSteps(p);
    for (;;) { const r = steps.next(); if (r.done) return r.value; }
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
    this.facts = p.names;
    this.poolFacts = p.pools;
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
