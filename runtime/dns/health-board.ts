import type { HealthEntry } from '../ports/health-view.js';
import type { HealthRow } from './health-rows.js';

/**
 * The health board (docs/dns.md "Workers"): the verdicts every DNS worker thread answers from, in
 * shared memory that the main thread writes and every worker reads, so a flip reaches all of them
 * at the same instant and nothing is copied per worker or per query.
 *
 * Three SharedArrayBuffers, the two large ones growable (so they never move and no worker has to
 * be told of a new buffer):
 * - `head`: Int32 words: [0] the write sequence (odd while a batch is being written: a seqlock),
 *   [1] slots in use, [2] key bytes in use, then BUCKETS bucket heads (slot + 1, 0: empty).
 * - `slots`: one 48-byte record per endpoint: score, RTT ms, last checked and the cluster-wide RTT
 *   ms (HealthView.rttMs, -1: none) (Float64), then Int32 state (0: no entry, healthy by the optimistic start; 1: healthy; 2: unhealthy), key offset, key
 *   length, next slot + 1 in the bucket's chain.
 * - `keys`: the endpoints' keys, `poolId NUL ip` in UTF-8.
 *
 * A slot is never reused while its board is in use (an endpoint whose entry goes away keeps its slot
 * with state 0), so a reader may keep the slot it found. Endpoints that are no longer served (their
 * pool or member removed) keep theirs until the whole table is written with more of them than of
 * served ones (and over 65,536): then the main thread writes the served ones to a new board and
 * hands it to every worker (`board` message), which forgets the slots it found. The main thread is
 * the only writer.
 */
export interface HealthBoardBuffers { head: SharedArrayBuffer; slots: SharedArrayBuffer; keys: SharedArrayBuffer }

/** Bucket heads: fixed, so the chains are never rehashed (a reader may walk one while a slot is added). */
const BUCKETS = 1 << 16;
const HEAD_WORDS = 4;
const SEQ = 0;
const USED = 1;
const KEY_BYTES = 2;
/** bytes per slot record, and the Int32 words of its fields */
const REC = 48;
/** Float64 and Int32 elements per record */
const F64S = REC / 8;
const I32S = REC / 4;
const W_STATE = 8;
const W_KEY_OFF = 9;
const W_KEY_LEN = 10;
const W_NEXT = 11;
/**
 * The most endpoints the board holds (4,194,304, forty times the 100,000 members one node is sized
 * for): the buffers reserve that much address space and commit it as they grow.
 */
export const BOARD_MAX_SLOTS = 1 << 22;
const MAX_KEY_BYTES = BOARD_MAX_SLOTS * 64;
const FIRST_SLOTS = 1024;
/** unserved slots tolerated before `replace` moves to a new board: this many, and as many as served ones */
const COMPACT_MIN_DEAD = 1 << 16;

const STATE_NONE = 0;
const STATE_HEALTHY = 1;
const STATE_UNHEALTHY = 2;

/** A growable SharedArrayBuffer (ES2024, in Node 20 and later; TypeScript's ES2022 library does not declare it). */
type Growable = SharedArrayBuffer & { grow(bytes: number): void };
const growable = (bytes: number, maxByteLength: number): Growable =>
  new (SharedArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => Growable)(bytes, { maxByteLength });

function freshBuffers(): HealthBoardBuffers {
  return {
    head: new SharedArrayBuffer((HEAD_WORDS + BUCKETS) * 4),
    slots: growable(FIRST_SLOTS * REC, BOARD_MAX_SLOTS * REC),
    keys: growable(FIRST_SLOTS * 64, MAX_KEY_BYTES),
  };
}

/** FNV-1a over `n` bytes of `b`. */
function fnv(b: Uint8Array, off: number, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ b[off + i]!, 0x01000193);
  return h >>> 0;
}

/** Typed views over a board's buffers (length-tracking: they follow the buffers' growth). */
class BoardViews {
  head!: Int32Array;
  f64!: Float64Array;
  i32!: Int32Array;
  keys!: Uint8Array;
  /** scratch for a key being looked up (grown on demand) */
  protected scratch = Buffer.allocUnsafe(256);

  constructor(protected b: HealthBoardBuffers) { this.views(b); }

  protected views(b: HealthBoardBuffers): void {
    this.b = b;
    this.head = new Int32Array(b.head);
    this.f64 = new Float64Array(b.slots);
    this.i32 = new Int32Array(b.slots);
    this.keys = new Uint8Array(b.keys);
  }

  /** Writes `pool NUL ip` into the scratch buffer; its length. */
  protected encode(pool: string, ip: string): number {
    const need = 3 * (pool.length + ip.length) + 1;
    if (need > this.scratch.length) this.scratch = Buffer.allocUnsafe(need * 2);
    const n = this.scratch.write(pool, 0, 'utf8');
    this.scratch[n] = 0;
    return n + 1 + this.scratch.write(ip, n + 1, 'utf8');
  }

  /** The slot of the key in the scratch buffer (length `n`, hash `h`), or -1. */
  protected find(n: number, h: number): number {
    const i32 = this.i32;
    const keys = this.keys;
    const s = this.scratch;
    for (let slot = Atomics.load(this.head, HEAD_WORDS + (h & (BUCKETS - 1))) - 1; slot >= 0; slot = i32[slot * I32S + W_NEXT]! - 1) {
      if (i32[slot * I32S + W_KEY_LEN] !== n) continue;
      const off = i32[slot * I32S + W_KEY_OFF]!;
      let i = 0;
      while (i < n && keys[off + i] === s[i]) i++;
      if (i === n) return slot;
    }
    return -1;
  }
}

/**
 * The main thread's side: writes verdict rows (worker-protocol.ts `healthDelta`, `healthTable`),
 * each batch between two increments of the sequence, so a reader never takes half of one as a whole.
 */
export class HealthBoardWriter extends BoardViews {
  /** pool → ip → slot, the writer's own index of the chains (no key string is made per write) */
  private readonly index = new Map<string, Map<string, number>>();
  /** slots named by the current `replace` pass */
  private seen = new Uint8Array(0);
  private full = false;
  /** told once when the board is full (endpoints past BOARD_MAX_SLOTS read as healthy in the workers) */
  onFull: (() => void) | undefined;

  /** told when `replace` moved to a new board: every worker must read that one from now on */
  onNewBoard: ((b: HealthBoardBuffers) => void) | undefined;

  constructor() { super(freshBuffers()); }

  /** The buffers to hand to a worker ({@link HealthBoardReader}). */
  get buffers(): HealthBoardBuffers { return this.b; }

  /** Endpoints the board holds a slot for. */
  get size(): number { return this.head[USED]!; }

  /** Writes the verdicts of changed endpoints, and clears the ones in `cleared` (healthy again). */
  update(rows: readonly HealthRow[], cleared: readonly (readonly [string, string])[]): void {
    this.begin();
    try {
      for (const [pool, ip] of cleared) {
        const slot = this.index.get(pool)?.get(ip);
        if (slot !== undefined) this.i32[slot * I32S + W_STATE] = STATE_NONE;
      }
      for (const r of rows) this.put(r);
    } finally {
      this.end();
    }
  }

  /** Replaces every verdict with `rows`: an endpoint not among them is cleared (healthy by the optimistic start). */
  replace(rows: readonly HealthRow[]): void {
    const dead = this.head[USED]! - rows.length;
    if (dead > COMPACT_MIN_DEAD && dead > rows.length) {
      // a new board with the served endpoints only; its sequence goes on from this one's
      const seq = this.head[SEQ]!;
      this.views(freshBuffers());
      this.head[SEQ] = seq + 2;
      this.index.clear();
      this.full = false;
      this.update(rows, []);
      this.onNewBoard?.(this.b);
      return;
    }
    this.begin();
    try {
      const used = this.head[USED]!;
      if (this.seen.length < used + rows.length) this.seen = new Uint8Array((used + rows.length) * 2);
      const seen = this.seen;
      seen.fill(0, 0, used + rows.length);
      for (const r of rows) {
        const slot = this.put(r);
        if (slot >= 0) seen[slot] = 1;
      }
      const i32 = this.i32;
      for (let slot = 0, n = this.head[USED]!; slot < n; slot++) if (!seen[slot]) i32[slot * I32S + W_STATE] = STATE_NONE;
    } finally {
      this.end();
    }
  }

  private begin(): void { Atomics.add(this.head, SEQ, 1); }
  private end(): void { Atomics.add(this.head, SEQ, 1); }

  /** Writes one row; its slot (-1 when the board is full). */
  private put([pool, ip, healthy, score, rttMs, lastChecked, clusterRttMs]: HealthRow): number {
    let byIp = this.index.get(pool);
    if (!byIp) this.index.set(pool, (byIp = new Map()));
    let slot = byIp.get(ip);
    if (slot === undefined) {
      slot = this.add(pool, ip);
      if (slot < 0) return -1;
      byIp.set(ip, slot);
    }
    const f = slot * F64S;
    this.f64[f] = score;
    this.f64[f + 1] = rttMs;
    this.f64[f + 2] = lastChecked;
    this.f64[f + 3] = clusterRttMs ?? (lastChecked > 0 ? rttMs : -1);
    this.i32[slot * I32S + W_STATE] = healthy ? STATE_HEALTHY : STATE_UNHEALTHY;
    return slot;
  }

  /** Appends a slot for a key and links it into its chain; -1 when the board is full. */
  private add(pool: string, ip: string): number {
    const head = this.head;
    const slot = head[USED]!;
    const n = this.encode(pool, ip);
    const off = head[KEY_BYTES]!;
    if (slot >= BOARD_MAX_SLOTS || off + n > MAX_KEY_BYTES) {
      if (!this.full) { this.full = true; this.onFull?.(); }
      return -1;
    }
    const { slots, keys } = this.b as unknown as { slots: Growable; keys: Growable };
    if ((slot + 1) * REC > slots.byteLength) slots.grow(Math.min(BOARD_MAX_SLOTS * REC, slots.byteLength * 2));
    if (off + n > keys.byteLength) keys.grow(Math.min(MAX_KEY_BYTES, Math.max(off + n, keys.byteLength * 2)));
    this.keys.set(this.scratch.subarray(0, n), off);
    const w = slot * I32S;
    const i32 = this.i32;
    i32[w + W_STATE] = STATE_NONE;
    i32[w + W_KEY_OFF] = off;
    i32[w + W_KEY_LEN] = n;
    const bucket = HEAD_WORDS + (fnv(this.scratch, 0, n) & (BUCKETS - 1));
    i32[w + W_NEXT] = head[bucket]!;
    head[KEY_BYTES] = off + n;
    // the record is whole before a reader can reach it through its bucket
    Atomics.store(head, bucket, slot + 1);
    Atomics.store(head, USED, slot + 1);
    return slot;
  }
}

/**
 * A worker's side: the health view its answer path reads (`refreshHealth`). `version` is -1 while
 * the main thread is writing a batch; a reader that sees it change between its reads of a plan's
 * members keeps the plan's previous state and reads again on the next query. The slots it found
 * are kept per pool (a slot never moves).
 */
export class HealthBoardReader extends BoardViews {
  /** pool → ip → slot, or -(slots in use + 1) when it was not on the board then */
  private readonly slotOf = new Map<string, Map<string, number>>();
  private readonly entry: HealthEntry = { healthy: true, score: 1, rttMs: 0, lastChecked: 0, node: '' };
  /** the cluster-wide RTT of the endpoint `get` last returned */
  private lastClusterRtt = -1;
  private lastPool = '';
  private lastIp = '';
  private lastSlot = -1;

  /** Reads the board the main thread moved to (`HealthBoardWriter.onNewBoard`) from now on. */
  adopt(b: HealthBoardBuffers): void {
    this.views(b);
    this.slotOf.clear();
    this.lastPool = this.lastIp = '';
    this.lastSlot = -1;
  }

  /** Increases with every batch the main thread writes; -1 while one is being written. */
  get version(): number {
    const s = Atomics.load(this.head, SEQ);
    return s & 1 ? -1 : s >>> 1;
  }

  private slot(pool: string, ip: string): number {
    if (ip === this.lastIp && pool === this.lastPool) return this.lastSlot;
    let byIp = this.slotOf.get(pool);
    if (!byIp) this.slotOf.set(pool, (byIp = new Map()));
    let slot = byIp.get(ip);
    if (slot === undefined || (slot < 0 && -slot - 1 !== Atomics.load(this.head, USED))) {
      const used = Atomics.load(this.head, USED);
      const n = this.encode(pool, ip);
      const found = this.find(n, fnv(this.scratch, 0, n));
      slot = found >= 0 ? found : -(used + 1);
      byIp.set(ip, slot);
    }
    if (slot >= 0) {
      // kept for the isHealthy that follows a get (a slot not found is looked for again)
      this.lastPool = pool;
      this.lastIp = ip;
      this.lastSlot = slot;
    }
    return slot;
  }

  /**
   * The endpoint's entry, or undefined when it has none. The object is reused: read its fields
   * before the next call.
   */
  get(pool: string, ip: string): HealthEntry | undefined {
    const slot = this.slot(pool, ip);
    if (slot < 0) return undefined;
    const state = this.i32[slot * I32S + W_STATE];
    if (state === STATE_NONE) return undefined;
    const e = this.entry;
    e.healthy = state === STATE_HEALTHY;
    e.score = this.f64[slot * F64S]!;
    e.rttMs = this.f64[slot * F64S + 1]!;
    e.lastChecked = this.f64[slot * F64S + 2]!;
    this.lastClusterRtt = this.f64[slot * F64S + 3]!;
    return e;
  }

  /** The main thread's verdict under its policy (no entry: healthy, the optimistic start). */
  isHealthy(pool: string, ip: string): boolean {
    const slot = this.slot(pool, ip);
    return slot < 0 || this.i32[slot * I32S + W_STATE] !== STATE_UNHEALTHY;
  }

  /**
   * The cluster-wide RTT (HealthView.rttMs) of the endpoint whose entry `get` just returned; -1 when
   * none (no entry: this node has no RTT, and the main thread wrote a row wherever a peer has one).
   */
  rttMs(_pool: string, _ip: string, e: HealthEntry | undefined): number {
    return e === undefined ? -1 : this.lastClusterRtt;
  }
}
