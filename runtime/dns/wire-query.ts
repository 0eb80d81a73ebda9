/**
 * A focused DNS query decoder for the answer path (RFC 1035 §4, EDNS0 RFC 6891, Client Subnet
 * RFC 7871).
 *
 * Why not a general codec: general-purpose codecs (dns2, dns-packet) build an object graph per
 * packet — arrays of records, a string per label, option objects — and top out around 8k queries
 * per second in this process. An authoritative server only needs the header, the single question,
 * and the OPT record, so this decoder reads exactly those into one reused `ParsedQuery`. The one
 * string it needs (the lower-cased name) comes from a table of recently seen names
 * (name-intern.ts), so a name seen a moment ago costs no allocation.
 */
import { HASH_START, NAME_TEXT_MAX, NameTable, hashByte } from './name-intern.js';

/** Decode outcome: OK, or why the packet gets no normal answer. */
export const enum DecodeStatus { Ok = 0, Drop = -1, FormErr = 1, NotImp = 4, BadVers = 16 }

/** Client Subnet option fields (RFC 7871 §6). `addr` holds the address bytes, zero-padded. */
export interface EcsOption { family: number; sourcePrefix: number; addr: Buffer }

/**
 * The fields of one query the server needs. Reused across queries: copy anything kept past the
 * synchronous handling of the packet (`cloneQuery`).
 */
export class ParsedQuery {
  id = 0;
  flags = 0;
  opcode = 0;
  /** lower-cased name with trailing dot (`www.example.test.`) */
  name = '.';
  qtype = 0;
  qclass = 0;
  /** end offset of the question in the request (the question is echoed byte for byte) */
  questionEnd = 12;
  /** number of labels in the name */
  labels = 0;
  edns = false;
  udpSize = 512;
  ednsVersion = 0;
  dnssecOk = false;
  hasEcs = false;
  /** offset of the TSIG RR (RFC 8945), the last additional record; -1 when the query is unsigned */
  tsigAt = -1;
  readonly ecs: EcsOption = { family: 0, sourcePrefix: 0, addr: Buffer.alloc(16) };
}

/** A copy of a parsed query that stays valid after the packet buffer is reused. */
export function cloneQuery(q: ParsedQuery): ParsedQuery {
  const c = new ParsedQuery();
  Object.assign(c, q, { ecs: { family: q.ecs.family, sourcePrefix: q.ecs.sourcePrefix, addr: Buffer.from(q.ecs.addr) } });
  return c;
}

// One scratch buffer for the lower-cased name's bytes, and the names seen recently (one table per
// thread: decoding is synchronous).
const nameScratch = Buffer.allocUnsafe(256);
/** The names this thread decoded recently (exported for tests: `misses` counts the strings built). */
export const queryNames = new NameTable(1024);

/** Big-endian 16-bit read without Buffer#readUInt16BE's bound check (callers check `off + 2 <= length`). */
const u16 = (b: Buffer, off: number): number => (b[off]! << 8) | b[off + 1]!;

/**
 * Decodes the header, the one question and the additional section (OPT, TSIG) of `buf` into `q`.
 * Never throws.
 * Drop: too short for a header, or a response (QR set) — replying to responses invites loops.
 * FormErr: bad counts, truncated or compressed question names, a bad OPT or ECS option, a TSIG
 * that is not the last record. NotImp: an opcode other than QUERY. BadVers: EDNS version above 0
 * (RFC 6891 §6.1.3). A FormErr or NotImp reply still learns the OPT record (and TSIG) when the
 * rest of the message can be walked, so the reply carries an OPT as RFC 6891 §7 asks; that walk
 * runs only on those error paths.
 */
export function decodeQuery(buf: Buffer, q: ParsedQuery): DecodeStatus {
  const len = buf.length;
  if (len < 12) return DecodeStatus.Drop;
  q.id = u16(buf, 0);
  q.flags = u16(buf, 2);
  if (q.flags & 0x8000) return DecodeStatus.Drop;
  q.opcode = (q.flags >> 11) & 0xf;
  q.edns = false;
  q.udpSize = 512;
  q.ednsVersion = 0;
  q.dnssecOk = false;
  q.hasEcs = false;
  q.tsigAt = -1;
  q.name = '.';
  q.labels = 0;
  q.qtype = 0;
  q.questionEnd = 12;
  const qd = u16(buf, 4);
  if (q.opcode !== 0) {
    // Echo the question when it parses; the reply is NOTIMP either way.
    if (qd === 1) readQuestion(buf, q);
    learnAdditional(buf, q, qd);
    return DecodeStatus.NotImp;
  }
  if (qd !== 1 || !readQuestion(buf, q)) {
    learnAdditional(buf, q, qd);
    return DecodeStatus.FormErr;
  }
  const st = readAdditional(buf, q, q.questionEnd);
  if (st !== DecodeStatus.Ok) return st;
  if (q.edns && q.ednsVersion > 0) return DecodeStatus.BadVers;
  return DecodeStatus.Ok;
}

/**
 * Skips the answer and authority records (a query carries none; they are tolerated) from `off`
 * and reads the additional section: the OPT record (RFC 6891 §6.1.1: one only, owner root) and
 * the position of a TSIG record (RFC 8945 §5.2: the last record, one only).
 */
function readAdditional(buf: Buffer, q: ParsedQuery, off: number): DecodeStatus {
  const len = buf.length;
  const an = u16(buf, 6);
  const ns = u16(buf, 8);
  const ar = u16(buf, 10);
  for (let i = 0; i < an + ns; i++) {
    off = skipRecord(buf, off);
    if (off < 0) return DecodeStatus.FormErr;
  }
  for (let i = 0; i < ar; i++) {
    const nameEnd = skipName(buf, off);
    if (nameEnd < 0 || nameEnd + 10 > len) return DecodeStatus.FormErr;
    const type = u16(buf, nameEnd);
    const rdlen = u16(buf, nameEnd + 8);
    const end = nameEnd + 10 + rdlen;
    if (end > len) return DecodeStatus.FormErr;
    if (type === 41) {
      if (q.edns || nameEnd !== off + 1) return DecodeStatus.FormErr;
      q.edns = true;
      q.udpSize = Math.max(512, u16(buf, nameEnd + 2));
      q.ednsVersion = buf[nameEnd + 5]!;
      q.dnssecOk = (buf[nameEnd + 6]! & 0x80) !== 0;
      if (!readOptions(buf, nameEnd + 10, end, q)) return DecodeStatus.FormErr;
    } else if (type === 250) {
      if (i !== ar - 1 || end !== len) return DecodeStatus.FormErr;
      q.tsigAt = off;
    }
    off = end;
  }
  return DecodeStatus.Ok;
}

/**
 * For a message already refused (FORMERR, NOTIMP): walks past its `qd` questions and reads the
 * additional section for OPT and TSIG, best effort. A message too broken to walk gets no OPT.
 */
function learnAdditional(buf: Buffer, q: ParsedQuery, qd: number): void {
  let off = 12;
  for (let i = 0; i < qd; i++) {
    off = skipName(buf, off);
    if (off < 0 || off + 4 > buf.length) return;
    off += 4;
  }
  if (readAdditional(buf, q, off) !== DecodeStatus.Ok) q.tsigAt = -1;
}

function readQuestion(buf: Buffer, q: ParsedQuery): boolean {
  const len = buf.length;
  let off = 12;
  let w = 0;
  let labels = 0;
  let h = HASH_START;
  for (;;) {
    if (off >= len) return false;
    const l = buf[off++]!;
    if (l === 0) break;
    // Compression pointers (0xC0) and the reserved label types are refused in the question, and
    // so is a name longer than 255 octets on the wire (RFC 1035 §2.3.4).
    if (l > 63 || off + l > len || w + l + 1 > NAME_TEXT_MAX) return false;
    for (let i = 0; i < l; i++) {
      let c = buf[off + i]!;
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      // A dot inside a label would change the label structure of the string form; map it to a
      // byte no served name contains, so such names simply match nothing.
      else if (c === 0x2e) c = 0x7f;
      nameScratch[w++] = c;
      h = hashByte(h, c);
    }
    nameScratch[w++] = 0x2e;
    h = hashByte(h, 0x2e);
    off += l;
    labels++;
  }
  if (off + 4 > len) return false;
  q.name = w === 0 ? '.' : queryNames.intern(nameScratch, w, h);
  q.labels = labels;
  q.qtype = u16(buf, off);
  q.qclass = u16(buf, off + 2);
  q.questionEnd = off + 4;
  return true;
}

/** Returns the offset after a (possibly compressed) name, or -1. */
export function skipName(buf: Buffer, off: number): number {
  const len = buf.length;
  for (let guard = 0; guard < 128; guard++) {
    if (off >= len) return -1;
    const l = buf[off]!;
    if (l === 0) return off + 1;
    if ((l & 0xc0) === 0xc0) return off + 2 <= len ? off + 2 : -1;
    if (l > 63) return -1;
    off += l + 1;
  }
  return -1;
}

export function skipRecord(buf: Buffer, off: number): number {
  const n = skipName(buf, off);
  if (n < 0 || n + 10 > buf.length) return -1;
  const end = n + 10 + u16(buf, n + 8);
  return end > buf.length ? -1 : end;
}

/** Reads EDNS options; only Client Subnet (code 8) is interpreted. */
function readOptions(buf: Buffer, off: number, end: number, q: ParsedQuery): boolean {
  while (off < end) {
    if (off + 4 > end) return false;
    const code = u16(buf, off);
    const olen = u16(buf, off + 2);
    const data = off + 4;
    if (data + olen > end) return false;
    if (code === 8) {
      if (q.hasEcs || olen < 4) return false;
      const family = u16(buf, data);
      const source = buf[data + 2]!;
      const scope = buf[data + 3]!;
      const max = family === 1 ? 32 : family === 2 ? 128 : -1;
      // RFC 7871 §7.1.1: unknown family, prefix too long, non-zero SCOPE, or address length that
      // does not match the prefix are FORMERR.
      if (max < 0 || source > max || scope !== 0) return false;
      const alen = olen - 4;
      if (alen !== Math.ceil(source / 8)) return false;
      q.ecs.addr.fill(0);
      buf.copy(q.ecs.addr, 0, data + 4, data + 4 + alen);
      // Bits beyond the source prefix must be zero (§6).
      if (source % 8 !== 0 && alen > 0 && (q.ecs.addr[alen - 1]! & (0xff >> (source % 8))) !== 0) return false;
      q.ecs.family = family;
      q.ecs.sourcePrefix = source;
      q.hasEcs = true;
    }
    off = data + olen;
  }
  return off === end;
}

/** The ECS address as text (`192.0.2.0`, `2001:db8::`). Allocates; called only when ECS is present. */
export function ecsAddressText(e: EcsOption): string {
  const a = e.addr;
  if (e.family === 1) return `${a[0]}.${a[1]}.${a[2]}.${a[3]}`;
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(a.readUInt16BE(i).toString(16));
  return words.join(':');
}

/**
 * The QTYPE of a packet's first question without decoding it (for counting a dropped query by
 * type): walks the name's labels from offset 12. Returns 0 when the packet has no question or
 * its name does not end inside it (compression pointers do not occur in a question's name).
 */
export function questionType(buf: Buffer): number {
  if (buf.length < 12 || buf.readUInt16BE(4) === 0) return 0;
  let o = 12;
  while (o < buf.length) {
    const len = buf[o]!;
    if (len === 0) return o + 3 <= buf.length ? buf.readUInt16BE(o + 1) : 0;
    if (len > 63) return 0;
    o += len + 1;
  }
  return 0;
}
