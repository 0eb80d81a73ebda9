/**
 * An immutable, insertion-ordered map with cheap copy-on-write, used for snapshot tables.
 *
 * Why: a snapshot is copied on every write; copying a plain Map of 11,000 rows costs about 7 ms
 * here, so a REST write would be O(rows). This map keeps its entries in fixed-size chunks (each a
 * plain Map, in insertion order) and finds a key's chunk through a hash-sharded index, so a
 * `Builder` touching k keys copies at most k chunks and k index shards. Reads are two Map lookups
 * and iteration walks the chunks in order, so readers see it as an ordinary ReadonlyMap.
 */
const CHUNK = 256;
const SHARDS = 64;

function shardOf(key: string): number {
  // FNV-1a over the key; spread keys evenly over the index shards
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % SHARDS;
}

export class ChunkedMap<V> implements ReadonlyMap<string, V> {
  private constructor(
    private readonly chunks: readonly ReadonlyMap<string, V>[],
    private readonly index: readonly ReadonlyMap<string, number>[],
    readonly size: number,
  ) {}

  static empty<V>(): ChunkedMap<V> {
    return new ChunkedMap<V>([], Array.from({ length: SHARDS }, () => new Map<string, number>()), 0);
  }

  static from<V>(entries: Iterable<readonly [string, V]>): ChunkedMap<V> {
    const b = ChunkedMap.empty<V>().builder();
    for (const [k, v] of entries) b.set(k, v);
    return b.build();
  }

  get(key: string): V | undefined {
    const c = this.index[shardOf(key)]!.get(key);
    return c === undefined ? undefined : this.chunks[c]!.get(key);
  }

  has(key: string): boolean {
    return this.index[shardOf(key)]!.has(key);
  }

  *entries(): MapIterator<[string, V]> {
    for (const c of this.chunks) yield* c.entries();
  }

  *keys(): MapIterator<string> {
    for (const c of this.chunks) yield* c.keys();
  }

  *values(): MapIterator<V> {
    for (const c of this.chunks) yield* c.values();
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(fn: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }

  /** A builder for the next version; this map is never changed. */
  builder(): ChunkedMapBuilder<V> {
    return new ChunkedMapBuilder<V>(this.chunks, this.index, this.size, (c, i, s) => new ChunkedMap<V>(c, i, s));
  }
}

/** Accumulates changes, copying each touched chunk and index shard once. */
export class ChunkedMapBuilder<V> {
  private readonly chunks: Map<string, V>[];
  private readonly index: Map<string, number>[];
  private readonly copiedChunks = new Set<number>();
  private readonly copiedShards = new Set<number>();
  constructor(
    chunks: readonly ReadonlyMap<string, V>[],
    index: readonly ReadonlyMap<string, number>[],
    private size: number,
    private readonly make: (c: ReadonlyMap<string, V>[], i: ReadonlyMap<string, number>[], s: number) => ChunkedMap<V>,
  ) {
    this.chunks = [...chunks] as Map<string, V>[];
    this.index = [...index] as Map<string, number>[];
  }

  private chunk(n: number): Map<string, V> {
    if (!this.copiedChunks.has(n)) {
      this.chunks[n] = new Map(this.chunks[n] ?? []);
      this.copiedChunks.add(n);
    }
    return this.chunks[n]!;
  }

  private shard(n: number): Map<string, number> {
    if (!this.copiedShards.has(n)) {
      this.index[n] = new Map(this.index[n]!);
      this.copiedShards.add(n);
    }
    return this.index[n]!;
  }

  get(key: string): V | undefined {
    const c = this.index[shardOf(key)]!.get(key);
    return c === undefined ? undefined : this.chunks[c]!.get(key);
  }

  /** Sets a key; an existing key keeps its position, a new one goes last. */
  set(key: string, value: V): this {
    const s = shardOf(key);
    const c = this.index[s]!.get(key);
    if (c !== undefined) {
      this.chunk(c).set(key, value);
      return this;
    }
    let last = this.chunks.length - 1;
    if (last < 0 || this.chunks[last]!.size >= CHUNK) {
      this.chunks.push(new Map());
      last = this.chunks.length - 1;
      this.copiedChunks.add(last);
    }
    this.chunk(last).set(key, value);
    this.shard(s).set(key, last);
    this.size++;
    return this;
  }

  delete(key: string): this {
    const s = shardOf(key);
    const c = this.index[s]!.get(key);
    if (c === undefined) return this;
    this.chunk(c).delete(key);
    this.shard(s).delete(key);
    this.size--;
    return this;
  }

  build(): ChunkedMap<V> {
    return this.make(this.chunks, this.index, this.size);
  }
}
