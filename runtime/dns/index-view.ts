import type { Config } from '../config/types.js';
import { NAME_SHARDS, POOL_SHARDS, shardOf, type IndexImage, type NameEntry, type PoolEntry, type ServiceFields, type ShardUpdate } from './index-image.js';
import { NO_POOL_PARTS, planStatic, poolPartsOf, servicePlanOf, type GeoDeps, type PoolParts, type ServicePlan } from './service-plan.js';
import { fqdn, makeZone, type NameIndex, type TxtSet, type Zone } from './zone-index.js';

/** A name of a decoded shard; its plan, zone and TXT set are made on first use. */
class NameCell {
  plan: ServicePlan | undefined = undefined;
  /** the pool the plan was made from: a plan is made again once its pool's shard is replaced */
  pool: PoolCell | undefined = undefined;
  zone: Zone | undefined = undefined;
  /** the zone generation `zone` belongs to (zones change with the SOA serial) */
  zoneGen = -1;
  txt: TxtSet | undefined = undefined;
  readonly svc: ServiceFields | undefined;
  readonly zoneName: string | undefined;
  readonly apex: boolean;
  readonly ent: boolean;
  readonly txtRaw: [number, string[]] | undefined;
  constructor(e: NameEntry, zoneName: string | undefined) {
    this.svc = e.s;
    this.zoneName = zoneName;
    this.apex = e.a === 1;
    this.ent = e.e === 1;
    this.txtRaw = e.t;
  }
}

/** A pool of a decoded shard; `stale` once its shard is replaced. */
class PoolCell {
  parts: PoolParts | undefined = undefined;
  stale = false;
  constructor(readonly entry: PoolEntry | undefined) {}
}

/** The pool "cell" of services without a pool: never stale. */
const NO_POOL_CELL = new PoolCell(undefined);
NO_POOL_CELL.parts = NO_POOL_PARTS;

/**
 * A DNS worker's zone index (docs/dns.md "Workers"): the shared index image the main thread
 * writes (index-image.ts), read in place. A shard is decoded on the first lookup that falls in it,
 * a plan is made on the first query of its name, and both are kept until the main thread replaces
 * that shard; so a worker holds what its queries touched, and an apply costs it the shards that
 * changed. The same answers as the main thread's ZoneIndex of the same state (tested side by side).
 */
export class IndexView implements NameIndex {
  private readonly nameBufs: (SharedArrayBuffer | null)[] = new Array<SharedArrayBuffer | null>(NAME_SHARDS).fill(null);
  private readonly poolBufs: (SharedArrayBuffer | null)[] = new Array<SharedArrayBuffer | null>(POOL_SHARDS).fill(null);
  /** per shard, the names (or pool ids) decoded from it; undefined while not decoded */
  private readonly nameDecoded: (string[] | undefined)[] = new Array<string[] | undefined>(NAME_SHARDS);
  private readonly poolDecoded: (string[] | undefined)[] = new Array<string[] | undefined>(POOL_SHARDS);
  private readonly cells = new Map<string, NameCell>();
  private readonly poolCells = new Map<string, PoolCell>();
  private readonly zoneCache = new Map<string, Zone>();
  private readonly zoneNames = new Map<string, string>();
  private zoneGen = 0;
  private txtNames = 0;
  private readonly mainName: string | undefined;
  /** the SOA serial of every zone */
  serial = -1;
  main: Zone | undefined;
  staticPlan: ServicePlan | undefined;
  readonly services = { get: (n: string): NameCell & { plan: ServicePlan; zone: Zone } | undefined => this.service(n) };
  readonly zones = { get: (n: string): Zone | undefined => (this.cell(n)?.apex ? this.zoneFor(n) : undefined) };
  readonly emptyNonTerminals = { has: (n: string): boolean => this.cell(n)?.ent === true };
  readonly txt: NameIndex['txt'];
  /** told when a shard cannot be decoded (it then answers as empty) */
  onError: ((err: unknown) => void) | undefined;

  constructor(private readonly cfg: Config, private readonly geo: GeoDeps, image: IndexImage) {
    this.mainName = cfg.dns.domain ? fqdn(cfg.dns.domain) : undefined;
    const counts = () => this.txtNames;
    this.txt = { get size() { return counts(); }, get: (n) => this.txtAt(n) };
    this.apply(image);
    this.staticPlan = this.mainName ? planStatic(cfg, this.mainName, geo) : undefined;
  }

  /**
   * Takes an image from the main thread: the shards it names replace the ones held (a full image
   * replaces them all), and what was decoded from them is dropped. One synchronous step, so no
   * lookup sees half an image.
   */
  apply(image: IndexImage): void {
    if (image.full) {
      this.nameBufs.fill(null);
      this.poolBufs.fill(null);
      this.dropDecoded();
    }
    const take = (updates: ShardUpdate[], bufs: (SharedArrayBuffer | null)[], drop: (s: number) => void) => {
      for (const [s, buf] of updates) { drop(s); bufs[s] = buf; }
    };
    take(image.names, this.nameBufs, (s) => this.dropNames(s));
    take(image.pools, this.poolBufs, (s) => this.dropPools(s));
    this.txtNames = image.txtNames;
    if (image.serial !== this.serial) {
      this.serial = image.serial;
      this.zoneCache.clear();
      this.zoneGen++;
      this.main = this.mainName ? this.zoneFor(this.mainName) : undefined;
    }
  }

  /** How many name and pool shards are decoded now (what queries have touched since they were replaced). */
  decodedShards(): { names: number; pools: number } {
    const n = (a: (string[] | undefined)[]) => a.reduce((k, x) => k + (x ? 1 : 0), 0);
    return { names: n(this.nameDecoded), pools: n(this.poolDecoded) };
  }

  /** A geo database was loaded again: member locations may have moved, so every plan is made again. */
  geoChanged(): void {
    this.dropDecoded();
    this.staticPlan = this.mainName ? planStatic(this.cfg, this.mainName, this.geo) : undefined;
  }

  private dropDecoded(): void {
    this.cells.clear();
    this.zoneNames.clear();
    this.nameDecoded.fill(undefined);
    for (const p of this.poolCells.values()) p.stale = true;
    this.poolCells.clear();
    this.poolDecoded.fill(undefined);
  }

  private dropNames(s: number): void {
    const names = this.nameDecoded[s];
    if (!names) return;
    for (const n of names) this.cells.delete(n);
    this.nameDecoded[s] = undefined;
  }

  private dropPools(s: number): void {
    const ids = this.poolDecoded[s];
    if (!ids) return;
    for (const id of ids) {
      const p = this.poolCells.get(id);
      if (p) p.stale = true;
      this.poolCells.delete(id);
    }
    this.poolDecoded[s] = undefined;
  }

  /** The JSON entries of a shard buffer; [] for an empty shard or one that cannot be read (reported). */
  private decode<T>(buf: SharedArrayBuffer | null): T[] {
    if (!buf) return [];
    try {
      return JSON.parse(Buffer.from(buf).toString('utf8')) as T[];
    } catch (err) {
      this.onError?.(err);
      return [];
    }
  }

  private cell(n: string): NameCell | undefined {
    let c = this.cells.get(n);
    if (c === undefined) {
      const s = shardOf(n, NAME_SHARDS);
      if (this.nameDecoded[s] === undefined) {
        const names: string[] = [];
        for (const e of this.decode<NameEntry>(this.nameBufs[s])) { this.cells.set(e.n, new NameCell(e, this.zoneName(e.z))); names.push(e.n); }
        this.nameDecoded[s] = names;
        c = this.cells.get(n);
      }
    }
    return c;
  }

  /** One string per zone name, whichever shard it was read from (many names share a zone). */
  private zoneName(z: string | undefined): string | undefined {
    if (z === undefined) return undefined;
    let k = this.zoneNames.get(z);
    if (k === undefined) this.zoneNames.set(z, (k = z));
    return k;
  }

  private poolCell(id: string): PoolCell {
    let p = this.poolCells.get(id);
    if (p === undefined) {
      const s = shardOf(id, POOL_SHARDS);
      let ids = this.poolDecoded[s];
      if (ids === undefined) {
        ids = [];
        for (const e of this.decode<PoolEntry>(this.poolBufs[s])) { this.poolCells.set(e.p, new PoolCell(e)); ids.push(e.p); }
        this.poolDecoded[s] = ids;
        p = this.poolCells.get(id);
      }
      if (p === undefined) {
        // not in the image (never the case for a served service): no members, dropped with its shard
        this.poolCells.set(id, (p = new PoolCell(undefined)));
        ids.push(id);
      }
    }
    return p;
  }

  private service(n: string): NameCell & { plan: ServicePlan; zone: Zone } | undefined {
    const c = this.cell(n);
    if (c === undefined || c.svc === undefined) return undefined;
    if (c.plan === undefined || c.pool!.stale) {
      const pool = c.svc.poolId === null ? NO_POOL_CELL : this.poolCell(c.svc.poolId);
      pool.parts ??= pool.entry ? poolPartsOf(pool.entry.m, pool.entry.g, this.geo) : NO_POOL_PARTS;
      c.plan = servicePlanOf(c.svc, pool.parts);
      c.pool = pool;
    }
    if (c.zoneGen !== this.zoneGen) { c.zone = this.zoneFor(c.zoneName!); c.zoneGen = this.zoneGen; }
    return c as NameCell & { plan: ServicePlan; zone: Zone };
  }

  private txtAt(n: string): TxtSet | undefined {
    const c = this.cell(n);
    if (c?.txtRaw === undefined) return undefined;
    return (c.txt ??= { ttl: c.txtRaw[0], rdata: c.txtRaw[1].map((b) => Buffer.from(b, 'base64')) });
  }

  private zoneFor(name: string): Zone {
    let z = this.zoneCache.get(name);
    if (z === undefined) this.zoneCache.set(name, (z = makeZone(name, this.cfg, this.serial)));
    return z;
  }
}
