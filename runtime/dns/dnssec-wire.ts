/**
 * DNSSEC record forms (RFC 4034): the canonical form of an RRset that a signature covers (§6),
 * RRSIG record data (§3.1), NSEC record data with its type bitmap (§4.1), and what RFC 9824
 * (compact denial of existence) puts in them. Pure functions over Buffers.
 */

/** Record types of DNSSEC (RFC 4034 §7) and NXNAME (RFC 9824 §2). */
export const DNSSEC_TYPE = { DS: 43, RRSIG: 46, NSEC: 47, DNSKEY: 48, NXNAME: 128 } as const;

/** Number of labels in a name in uncompressed wire form (the root is 0). */
export function wireLabels(wire: Buffer): number {
  let n = 0;
  for (let off = 0; wire[off]! !== 0; off += wire[off]! + 1) n++;
  return n;
}

/**
 * A name in uncompressed wire form at `start` of `buf` (a question name: never compressed), in
 * canonical form: ASCII upper case made lower (RFC 4034 §6.2). Returns a new Buffer.
 */
export function canonicalName(buf: Buffer, start: number): Buffer {
  let end = start;
  while (buf[end]! !== 0) end += buf[end]! + 1;
  const out = Buffer.from(buf.subarray(start, end + 1));
  for (let off = 0; out[off]! !== 0; off += out[off]! + 1) {
    for (let i = off + 1; i <= off + out[off]!; i++) if (out[i]! >= 0x41 && out[i]! <= 0x5a) out[i]! |= 0x20;
  }
  return out;
}

/**
 * The RRSIG record data before the signature (RFC 4034 §3.1): type covered, algorithm, labels,
 * original TTL, expiration, inception (seconds, serial arithmetic), key tag, signer's name.
 */
export function rrsigHeader(type: number, algorithm: number, labels: number, ttl: number, expiration: number, inception: number, tag: number, signer: Buffer): Buffer {
  const out = Buffer.alloc(18 + signer.length);
  out.writeUInt16BE(type, 0);
  out[2] = algorithm;
  out[3] = labels;
  out.writeUInt32BE(ttl >>> 0, 4);
  out.writeUInt32BE(expiration >>> 0, 8);
  out.writeUInt32BE(inception >>> 0, 12);
  out.writeUInt16BE(tag, 16);
  signer.copy(out, 18);
  return out;
}

/**
 * What a signature covers (RFC 4034 §3.1.8.1): the RRSIG header, then every record of the set in
 * canonical form (owner lower case and uncompressed, class IN, the original TTL) ordered by record
 * data as unsigned octet strings, duplicates removed (§6.3). Record data must be canonical already
 * (uncompressed, names in lower case): zone-index.ts builds it so.
 */
export function signedData(header: Buffer, owner: Buffer, type: number, ttl: number, rdatas: readonly Buffer[]): Buffer {
  const sorted = [...rdatas].sort(Buffer.compare).filter((r, i, a) => i === 0 || !r.equals(a[i - 1]!));
  const parts: Buffer[] = [header];
  for (const rd of sorted) {
    const fixed = Buffer.alloc(10);
    fixed.writeUInt16BE(type, 0);
    fixed.writeUInt16BE(1, 2);
    fixed.writeUInt32BE(ttl >>> 0, 4);
    fixed.writeUInt16BE(rd.length, 8);
    parts.push(owner, fixed, rd);
  }
  return Buffer.concat(parts);
}

/** The type bitmap of an NSEC record (RFC 4034 §4.1.2): windows of 256 types, trailing zero octets left out. */
export function typeBitmap(types: readonly number[]): Buffer {
  const windows = new Map<number, number[]>();
  for (const t of new Set(types)) {
    const w = t >> 8;
    const bits = windows.get(w) ?? [];
    bits.push(t & 0xff);
    windows.set(w, bits);
  }
  const parts: Buffer[] = [];
  for (const w of [...windows.keys()].sort((a, b) => a - b)) {
    const bits = windows.get(w)!;
    const len = (Math.max(...bits) >> 3) + 1;
    const block = Buffer.alloc(2 + len);
    block[0] = w;
    block[1] = len;
    for (const b of bits) block[2 + (b >> 3)]! |= 0x80 >> (b & 7);
    parts.push(block);
  }
  return Buffer.concat(parts);
}

/**
 * NSEC record data (RFC 4034 §4.1) for a compact answer (RFC 9824 §3): the next name is the
 * owner's immediate successor in canonical order, `\000.<owner>`, so the record covers no other
 * name and the zone cannot be walked. Undefined when that name would exceed 255 octets.
 */
export function compactNsecRdata(owner: Buffer, types: readonly number[]): Buffer | undefined {
  if (owner.length + 2 > 255) return undefined;
  return Buffer.concat([Buffer.from([1, 0]), owner, typeBitmap(types)]);
}
