import type { ParsedQuery } from './wire-query.js';

/**
 * A focused DNS reply encoder (RFC 1035 §4.1, EDNS0 RFC 6891, ECS RFC 7871). Records are written
 * into one reused 64 KiB scratch buffer, or straight into a caller's buffer (a batched UDP send
 * slot, `writeTo`); owner names are compression pointers into the echoed question, and record data
 * is precomputed at snapshot-swap time, so encoding is a few integer writes and `copy` calls.
 * `copyOut` returns the only per-query allocation of the scratch path: the reply itself (a copy,
 * because a queued send keeps a reference to the bytes it was given).
 */

/** DNS record types the server answers. */
export const TYPE = { A: 1, NS: 2, SOA: 6, TXT: 16, AAAA: 28, OPT: 41, TSIG: 250, ANY: 255, AXFR: 252, IXFR: 251 } as const;
/** Response codes (RFC 1035, RFC 8945 NOTAUTH, RFC 6891 BADVERS). */
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, NOTAUTH: 9, BADVERS: 16 } as const;

export { nameToWire } from '../net/dns-names.js';

/**
 * Copies `src[start, end)` to `dst[at…]`. Short ranges (record data, questions, most replies) are
 * copied in JS: Buffer#copy's native call costs more than copying a few dozen bytes.
 */
function copyBytes(src: Buffer, start: number, end: number, dst: Buffer, at: number): void {
  if (end - start > 256) { src.copy(dst, at, start, end); return; }
  for (let i = start; i < end; i++) dst[at++] = src[i]!;
}

/**
 * Builds one reply at a time: `begin`, then answers, then authority records, then `seal`. One
 * writer per server; not reentrant. Replies go to the scratch buffer unless `writeTo` named another
 * place; a reply that outgrows that place moves to the scratch buffer (`inPlace` turns false).
 */
export class ReplyWriter {
  private readonly scratch = Buffer.allocUnsafe(65535);
  /** where the reply is written: the scratch buffer or the `writeTo` target */
  private buf: Buffer = this.scratch;
  /** offset of the reply's first byte in `buf` */
  private base = 0;
  /** `buf` offset the reply may not pass */
  private end = 65535;
  /** write position in `buf` (absolute; the reply's length is `pos - base`) */
  private pos = 0;
  private an = 0;
  private ns = 0;
  private rcode = 0;
  private flags = 0;
  private qdcount = 0;

  /** The next replies are written to `out[at, at + max)` (until `writeToScratch`). */
  writeTo(out: Buffer, at: number, max: number): void {
    this.buf = out;
    this.base = at;
    this.end = at + Math.min(max, 65535);
  }

  /** The next replies are written to the scratch buffer (the default). */
  writeToScratch(): void {
    this.buf = this.scratch;
    this.base = 0;
    this.end = 65535;
  }

  /** True while the reply is in the `writeTo` target: it fits, and needs no copy. */
  get inPlace(): boolean {
    return this.buf !== this.scratch;
  }

  /** The reply's length so far (after `seal`: the whole reply). */
  get length(): number {
    return this.pos - this.base;
  }

  /**
   * Makes room for `n` more bytes: a reply that would pass the end of a `writeTo` target moves to
   * the scratch buffer, which holds any reply (answers stop at 65,000 bytes).
   */
  private room(n: number): void {
    if (this.pos + n <= this.end || this.buf === this.scratch) return;
    const len = this.pos - this.base;
    copyBytes(this.buf, this.base, this.pos, this.scratch, 0);
    this.buf = this.scratch;
    this.base = 0;
    this.end = 65535;
    this.pos = len;
  }

  /**
   * Starts a reply to `q`: header with QR, the request's opcode, RD and CD copied, AA when
   * authoritative, and the question echoed byte for byte (keeps the client's 0x20 case mix).
   */
  begin(req: Buffer, q: ParsedQuery, rcode: number, aa: boolean): void {
    const qEnd = q.questionEnd > 12 ? q.questionEnd : 12;
    if (this.base + qEnd > this.end) this.writeToScratch();
    const b = this.buf;
    const o = this.base;
    b[o] = q.id >> 8;
    b[o + 1] = q.id & 0xff;
    this.rcode = rcode;
    this.flags = 0x8000 | (q.opcode << 11) | (aa ? 0x0400 : 0) | (q.flags & 0x0110);
    this.qdcount = q.questionEnd > 12 ? 1 : 0;
    if (this.qdcount) copyBytes(req, 12, q.questionEnd, b, o + 12);
    this.pos = o + qEnd;
    this.an = 0;
    this.ns = 0;
  }

  /** Changes the response code after `begin` (e.g. NOERROR → SERVFAIL). */
  setRcode(rcode: number): void {
    this.rcode = rcode;
  }

  /** Offset of the question name's suffix after skipping `skip` labels (for compression pointers). */
  nameOffset(skip: number): number {
    let off = 12;
    for (let i = 0; i < skip; i++) off += this.buf[this.base + off]! + 1;
    return off;
  }

  /** Writes a record header; the caller made room for it and its `rdlen` bytes of data. */
  private head(owner: number, type: number, ttl: number, rdlen: number): void {
    // Plain byte stores: the checked write helpers cost more than the record itself.
    const b = this.buf;
    const p = this.pos;
    b[p] = 0xc0 | (owner >> 8);
    b[p + 1] = owner & 0xff;
    b[p + 2] = type >> 8;
    b[p + 3] = type & 0xff;
    b[p + 4] = 0;
    b[p + 5] = 1;
    b[p + 6] = (ttl >>> 24) & 0xff;
    b[p + 7] = (ttl >>> 16) & 0xff;
    b[p + 8] = (ttl >>> 8) & 0xff;
    b[p + 9] = ttl & 0xff;
    b[p + 10] = rdlen >> 8;
    b[p + 11] = rdlen & 0xff;
    this.pos = p + 12;
  }

  /** Adds an answer record owned by the question name; `rdata` is precomputed (4 or 16 bytes for A/AAAA). */
  addAnswer(type: number, ttl: number, rdata: Buffer): boolean {
    if (this.pos - this.base + 12 + rdata.length > 65000) return false;
    this.room(12 + rdata.length);
    this.head(12, type, ttl, rdata.length);
    copyBytes(rdata, 0, rdata.length, this.buf, this.pos);
    this.pos += rdata.length;
    this.an++;
    return true;
  }

  /**
   * Adds an answer record of class `qclass` (e.g. 3, CHAOS: RFC 1035 §3.2.4) owned by the question
   * name; `addAnswer` writes class IN.
   */
  addAnswerOfClass(type: number, qclass: number, ttl: number, rdata: Buffer): boolean {
    if (!this.addAnswer(type, ttl, rdata)) return false;
    const at = this.pos - rdata.length - 12;
    this.buf[at + 4] = qclass >> 8;
    this.buf[at + 5] = qclass & 0xff;
    return true;
  }

  /** Adds an answer record owned by the name at `owner` (a compression offset). */
  addAnswerAt(owner: number, type: number, ttl: number, rdata: Buffer): void {
    this.room(12 + rdata.length);
    this.head(owner, type, ttl, rdata.length);
    rdata.copy(this.buf, this.pos);
    this.pos += rdata.length;
    this.an++;
  }

  /** Adds an authority record (SOA for negative answers, RFC 2308 §3). */
  addAuthority(owner: number, type: number, ttl: number, rdata: Buffer): void {
    this.room(12 + rdata.length);
    this.head(owner, type, ttl, rdata.length);
    rdata.copy(this.buf, this.pos);
    this.pos += rdata.length;
    this.ns++;
  }

  /** Number of answer records written so far. */
  get answers(): number {
    return this.an;
  }

  /** Current response code. */
  get code(): number {
    return this.rcode;
  }

  /**
   * Finishes the reply: appends OPT when the query had EDNS (advertising `payloadSize`, echoing DO
   * and the ECS option with `ecsScope`), applies the UDP size limit (`udpLimit` 0 for TCP) by
   * dropping all records and setting TC (RFC 1035 §4.2.1, RFC 7766), and returns a copy. With
   * `tcpPrefix` the copy starts with the two-byte length of RFC 1035 §4.2.2.
   */
  finish(q: ParsedQuery, udpLimit: number, payloadSize: number, ecsScope: number, tcpPrefix: boolean): Buffer {
    this.seal(q, udpLimit, payloadSize, ecsScope);
    return this.copyOut(tcpPrefix);
  }

  /**
   * The first part of `finish`: completes the reply in the buffer it is being written to (the
   * scratch buffer, or the send slot given by `writeTo`) and returns its length, without copying
   * it out (see `copyOut` and `copyInto`).
   */
  seal(q: ParsedQuery, udpLimit: number, payloadSize: number, ecsScope: number): number {
    const alen = q.hasEcs ? Math.ceil(q.ecs.sourcePrefix / 8) : 0;
    const optLen = q.edns ? 11 + (q.hasEcs ? 8 + alen : 0) : 0;
    if (udpLimit > 0 && this.pos - this.base + optLen > udpLimit) {
      // Too large for the client's buffer: send the question only, with TC, so it retries over TCP.
      this.pos = this.base + (this.qdcount ? q.questionEnd : 12);
      this.an = 0;
      this.ns = 0;
      this.flags |= 0x0200;
    }
    this.room(optLen);
    const b = this.buf;
    let arcount = 0;
    if (q.edns) {
      let p = this.pos;
      b[p] = 0;
      b[p + 1] = 0; b[p + 2] = 41;
      b[p + 3] = payloadSize >> 8; b[p + 4] = payloadSize & 0xff;
      b[p + 5] = this.rcode >> 4;
      b[p + 6] = 0;
      b[p + 7] = q.dnssecOk ? 0x80 : 0; b[p + 8] = 0;
      b[p + 9] = (optLen - 11) >> 8; b[p + 10] = (optLen - 11) & 0xff;
      p += 11;
      if (q.hasEcs) {
        b[p] = 0; b[p + 1] = 8;
        b[p + 2] = 0; b[p + 3] = 4 + alen;
        b[p + 4] = q.ecs.family >> 8; b[p + 5] = q.ecs.family & 0xff;
        b[p + 6] = q.ecs.sourcePrefix;
        b[p + 7] = Math.max(0, ecsScope);
        copyBytes(q.ecs.addr, 0, alen, b, p + 8);
        p += 8 + alen;
      }
      this.pos = p;
      arcount = 1;
    }
    const o = this.base;
    const flags = this.flags | (this.rcode & 0xf);
    b[o + 2] = flags >> 8; b[o + 3] = flags & 0xff;
    b[o + 4] = 0; b[o + 5] = this.qdcount;
    b[o + 6] = this.an >> 8; b[o + 7] = this.an & 0xff;
    b[o + 8] = this.ns >> 8; b[o + 9] = this.ns & 0xff;
    b[o + 10] = 0; b[o + 11] = arcount;
    return this.pos - o;
  }

  /** The sealed reply (a view: valid until the next `begin`). */
  sealed(): Buffer {
    return this.buf.subarray(this.base, this.pos);
  }

  /**
   * Appends one record, given as wire bytes, after the sealed reply and counts it in ARCOUNT: the
   * TSIG RR, which RFC 8945 §4.2 puts last (after the OPT).
   */
  appendAdditional(rr: Buffer): void {
    this.room(rr.length);
    const b = this.buf;
    const o = this.base;
    rr.copy(b, this.pos);
    this.pos += rr.length;
    const ar = ((b[o + 10]! << 8) | b[o + 11]!) + 1;
    b[o + 10] = ar >> 8; b[o + 11] = ar & 0xff;
  }

  /** A copy of the sealed reply, optionally with the TCP length prefix. */
  copyOut(tcpPrefix: boolean): Buffer {
    const n = this.pos - this.base;
    const skip = tcpPrefix ? 2 : 0;
    const out = Buffer.allocUnsafe(n + skip);
    if (tcpPrefix) { out[0] = n >> 8; out[1] = n & 0xff; }
    // A short reply is cheaper to copy byte by byte than through Buffer#copy's native call.
    copyBytes(this.buf, this.base, this.pos, out, skip);
    return out;
  }

  /**
   * Copies the sealed reply into `out` at `at` (a batched UDP send slot) and returns its length,
   * or -1 when it is longer than `max`.
   */
  copyInto(out: Buffer, at: number, max: number): number {
    const n = this.pos - this.base;
    if (n > max) return -1;
    copyBytes(this.buf, this.base, this.pos, out, at);
    return n;
  }
}
