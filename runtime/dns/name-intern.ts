/**
 * Query names seen recently, kept as strings so the decoder can hand out the same string again
 * instead of building a new one per query (docs/dns.md "Hot path"). A reused string also keeps
 * the hash V8 cached in it at its first Map lookup, so the zone index lookups of a returning name
 * hash nothing.
 *
 * The table is a fixed array of two-way sets addressed by a hash of the name's bytes (the
 * decoder computes it with `hashByte` while it lower-cases the name, so interning reads no byte
 * twice). A hit compares the stored bytes in full: a hash collision never returns another name's
 * string. A miss builds the string once and replaces the less recently used entry of its set.
 * Memory is fixed: `slots` × 256 bytes of names plus the strings.
 */

/**
 * The longest name in text form with its final dot: RFC 1035 §2.3.4 allows 255 octets on the
 * wire, which is the text form plus the root label's length byte.
 */
export const NAME_TEXT_MAX = 254;

/** FNV-1a offset basis: the hash of the empty name. */
export const HASH_START = 0x811c9dc5 | 0;

/** Adds one byte to an FNV-1a hash (32-bit). */
export function hashByte(h: number, c: number): number {
  return Math.imul(h ^ c, 0x01000193);
}

/** The hash `intern` expects for `bytes[0, len)`: what the decoder computes byte by byte. */
export function hashName(bytes: Uint8Array, len: number): number {
  let h = HASH_START;
  for (let i = 0; i < len; i++) h = hashByte(h, bytes[i]!);
  return h;
}

const SLOT_BYTES = 256;

/** A fixed-size table of recently seen names (lower-cased, dotted text form as latin1 bytes). */
export class NameTable {
  private readonly setMask: number;
  private readonly strings: string[];
  private readonly hashes: Int32Array;
  private readonly lengths: Int16Array;
  private readonly bytes: Uint8Array;
  /** per set: which way (0 or 1) was used last; the other one is replaced on a miss */
  private readonly recent: Uint8Array;

  /** names that were not in the table (each built a string) */
  misses = 0;

  /** `slots` is rounded up to a power of two, at least 2. */
  constructor(slots = 1024) {
    let n = 2;
    while (n < slots) n *= 2;
    this.setMask = n / 2 - 1;
    this.strings = new Array<string>(n).fill('');
    this.hashes = new Int32Array(n);
    this.lengths = new Int16Array(n).fill(-1);
    this.bytes = new Uint8Array(n * SLOT_BYTES);
    this.recent = new Uint8Array(n / 2);
  }

  /**
   * The string of the name `src[0, len)` (latin1, `len` at most NAME_TEXT_MAX) whose hash is
   * `hash` (`hashName`): the stored one when the same bytes were interned and not evicted since,
   * else a new one, stored. A longer `len` gets a string that is not stored.
   */
  intern(src: Buffer, len: number, hash: number): string {
    const set = (hash ^ (hash >>> 16)) & this.setMask;
    const w0 = set * 2;
    if (this.matches(w0, src, len, hash)) { this.recent[set] = 0; return this.strings[w0]!; }
    if (this.matches(w0 + 1, src, len, hash)) { this.recent[set] = 1; return this.strings[w0 + 1]!; }
    this.misses++;
    const s = src.toString('latin1', 0, len);
    if (len > NAME_TEXT_MAX) return s;
    const way = this.recent[set] === 0 ? 1 : 0;
    const slot = w0 + way;
    this.strings[slot] = s;
    this.hashes[slot] = hash;
    this.lengths[slot] = len;
    const b = this.bytes;
    const at = slot * SLOT_BYTES;
    for (let i = 0; i < len; i++) b[at + i] = src[i]!;
    this.recent[set] = way;
    return s;
  }

  private matches(slot: number, src: Buffer, len: number, hash: number): boolean {
    if (this.lengths[slot] !== len || this.hashes[slot] !== hash) return false;
    const b = this.bytes;
    const at = slot * SLOT_BYTES;
    for (let i = 0; i < len; i++) if (b[at + i] !== src[i]) return false;
    return true;
  }
}
