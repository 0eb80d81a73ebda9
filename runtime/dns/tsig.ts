import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Secret Key Transaction Authentication for DNS (TSIG, RFC 8945). Pure: no I/O, no clock (every
 * function takes `now` in seconds), no logging. Used by the answer path (a signed query gets a
 * signed reply or a TSIG error), by zone transfers (every message of the stream signed,
 * §5.3.1), and meant for RFC 2136 UPDATE the same way: `verifyRequest`, then `signResponse` or
 * `tsigErrorRecord`, or a `TsigStreamSigner` for multi-message responses.
 *
 * Secrets live only in `TsigKey.secret` (a Buffer): nothing here formats a key or a MAC into a
 * string, so nothing here can leak one into a log line.
 */

/** HMAC algorithms by their TSIG names (RFC 8945 §6). */
export type TsigAlgorithm = 'hmac-sha256' | 'hmac-sha512' | 'hmac-sha1';

const HASH: Record<TsigAlgorithm, { hash: string; size: number }> = {
  'hmac-sha256': { hash: 'sha256', size: 32 },
  'hmac-sha512': { hash: 'sha512', size: 64 },
  'hmac-sha1': { hash: 'sha1', size: 20 },
};

/** One shared key. `name` is lower-cased and fully qualified (`xfr.example.test.`). */
export interface TsigKey { name: string; algorithm: TsigAlgorithm; secret: Buffer }

/** Keys by lower-cased fully qualified name. */
export type TsigKeyring = ReadonlyMap<string, TsigKey>;

/** TSIG error codes (RFC 8945 §3, the TSIG RR's Error field). */
export const TSIG_ERROR = { NOERROR: 0, BADSIG: 16, BADKEY: 17, BADTIME: 18, BADTRUNC: 22 } as const;
/** RCODE 9 (RFC 2845 / 8945). */
export const RCODE_NOTAUTH = 9;
/** TSIG RR type, and the class it is sent in (ANY). */
export const TYPE_TSIG = 250;
const CLASS_ANY = 255;
/** Fudge put into the records this server signs (seconds; RFC 8945 §10 recommends 300). */
export const DEFAULT_FUDGE = 300;

const fqdn = (n: string) => (n.endsWith('.') ? n : `${n}.`).toLowerCase();

/** A keyring from configuration entries (`dns.axfr.tsigKeys`); `secret` is base64. */
export function tsigKeyring(keys: readonly { name: string; algorithm?: TsigAlgorithm | undefined; secret: string }[]): TsigKeyring {
  const out = new Map<string, TsigKey>();
  for (const k of keys) {
    const name = fqdn(k.name);
    if (!out.has(name)) out.set(name, { name, algorithm: k.algorithm ?? 'hmac-sha256', secret: Buffer.from(k.secret, 'base64') });
  }
  return out;
}

export { isBase64Secret } from '../crypto/base64.js';

/** The TSIG RR of a message, as received (RFC 8945 §4.2). */
export interface TsigRecord {
  /** offset of the RR in the message: everything before it is what was signed */
  start: number;
  /** owner name: the key name, lower-cased, fully qualified */
  keyName: string;
  /** the algorithm name, lower-cased, fully qualified (`hmac-sha256.`) */
  algorithm: string;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  other: Buffer;
}

/**
 * Reads a name at `off` as lower-cased text; returns [name, end] (`end`: the offset after the name
 * where it sits, after its first pointer when compressed) or undefined. RFC 8945 §4.2 says the
 * names of a TSIG RR are not compressed, yet common clients (dnspython, so certbot's RFC 2136
 * plugin) compress the owner name against the zone or question name: a pointer is followed when it
 * points backwards, into the message before the name being read, at most 127 times, and the name
 * stays within 255 octets (RFC 1035 §2.3.4). The MAC covers the canonical, uncompressed form
 * (§4.3.3), so how the name was sent changes nothing else.
 */
function readName(msg: Buffer, off: number): [string, number] | undefined {
  let name = '';
  let wire = 1;
  let end = -1;
  let floor = off;
  for (let guard = 0; guard < 128; guard++) {
    if (off >= msg.length) return undefined;
    const l = msg[off]!;
    if (l === 0) return [name === '' ? '.' : name, end < 0 ? off + 1 : end];
    if ((l & 0xc0) === 0xc0) {
      if (off + 1 >= msg.length) return undefined;
      const to = ((l & 0x3f) << 8) | msg[off + 1]!;
      // only backwards, to before every label read so far: no loop, whatever the message holds
      if (to >= floor) return undefined;
      if (end < 0) end = off + 2;
      off = floor = to;
      continue;
    }
    if (l > 63 || off + 1 + l > msg.length) return undefined;
    wire += l + 1;
    if (wire > 255) return undefined;
    name += `${msg.toString('latin1', off + 1, off + 1 + l).toLowerCase()}.`;
    off += 1 + l;
  }
  return undefined;
}

/** Parses the TSIG RR at `at` (the last record of `msg`); undefined when it is malformed. */
export function parseTsig(msg: Buffer, at: number): TsigRecord | undefined {
  const owner = readName(msg, at);
  if (!owner) return undefined;
  let p = owner[1];
  if (p + 10 > msg.length || msg.readUInt16BE(p) !== TYPE_TSIG || msg.readUInt16BE(p + 2) !== CLASS_ANY) return undefined;
  const rdlen = msg.readUInt16BE(p + 8);
  const end = p + 10 + rdlen;
  if (end !== msg.length) return undefined;
  p += 10;
  const alg = readName(msg, p);
  if (!alg) return undefined;
  p = alg[1];
  if (p + 10 > end) return undefined;
  const timeSigned = msg.readUInt16BE(p) * 2 ** 32 + msg.readUInt32BE(p + 2);
  const fudge = msg.readUInt16BE(p + 6);
  const macLen = msg.readUInt16BE(p + 8);
  p += 10;
  if (p + macLen + 6 > end) return undefined;
  const mac = msg.subarray(p, p + macLen);
  p += macLen;
  const originalId = msg.readUInt16BE(p);
  const error = msg.readUInt16BE(p + 2);
  const otherLen = msg.readUInt16BE(p + 4);
  p += 6;
  if (p + otherLen !== end) return undefined;
  return { start: at, keyName: owner[0], algorithm: alg[0], timeSigned, fudge, mac, originalId, error, other: msg.subarray(p, end) };
}

function nameWire(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter((l) => l.length > 0);
  const out = Buffer.alloc(labels.reduce((n, l) => n + l.length + 1, 1));
  let o = 0;
  for (const l of labels) { out[o++] = l.length; o += out.write(l, o, 'latin1'); }
  return out;
}

function u48(b: Buffer, at: number, v: number): void {
  b.writeUInt16BE(Math.floor(v / 2 ** 32) & 0xffff, at);
  b.writeUInt32BE(v >>> 0, at + 2);
}

/** What a signer needs to write one TSIG RR: the key, the algorithm name, times and error. */
interface RecordFields { keyName: string; algorithm: string; timeSigned: number; fudge: number; originalId: number; error: number; other: Buffer }

/** The TSIG variables of RFC 8945 §4.3.3 (canonical names, class ANY, TTL 0, times, error, other). */
function variables(f: RecordFields): Buffer {
  const key = nameWire(f.keyName);
  const alg = nameWire(f.algorithm);
  const b = Buffer.alloc(key.length + 6 + alg.length + 12 + f.other.length);
  let p = key.copy(b, 0);
  b.writeUInt16BE(CLASS_ANY, p);
  b.writeUInt32BE(0, p + 2);
  p += 6;
  p += alg.copy(b, p);
  u48(b, p, f.timeSigned);
  b.writeUInt16BE(f.fudge, p + 6);
  b.writeUInt16BE(f.error, p + 8);
  b.writeUInt16BE(f.other.length, p + 10);
  f.other.copy(b, p + 12);
  return b;
}

/** The 8 octets of TSIG timers (RFC 8945 §5.3.1: subsequent messages of a stream). */
function timers(timeSigned: number, fudge: number): Buffer {
  const b = Buffer.alloc(8);
  u48(b, 0, timeSigned);
  b.writeUInt16BE(fudge, 6);
  return b;
}

const withSize = (mac: Buffer) => { const b = Buffer.alloc(2 + mac.length); b.writeUInt16BE(mac.length); mac.copy(b, 2); return b; };

/** A message as it is signed: the TSIG RR (if any) left out, ARCOUNT without it, ID = Original ID. */
function unsignedView(msg: Buffer, tsigStart: number, originalId: number): Buffer {
  const b = Buffer.from(msg.subarray(0, tsigStart));
  b.writeUInt16BE(originalId, 0);
  b.writeUInt16BE(b.readUInt16BE(10) - 1, 10);
  return b;
}

function hmac(key: TsigKey, parts: Buffer[]): Buffer {
  const h = createHmac(HASH[key.algorithm].hash, key.secret);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** The TSIG RR bytes for `f` with `mac` (empty for an unsigned error). */
function encodeRecord(f: RecordFields, mac: Buffer): Buffer {
  const key = nameWire(f.keyName);
  const alg = nameWire(f.algorithm);
  const rdlen = alg.length + 10 + mac.length + 6 + f.other.length;
  const b = Buffer.alloc(key.length + 10 + rdlen);
  let p = key.copy(b, 0);
  b.writeUInt16BE(TYPE_TSIG, p);
  b.writeUInt16BE(CLASS_ANY, p + 2);
  b.writeUInt32BE(0, p + 4);
  b.writeUInt16BE(rdlen, p + 8);
  p += 10;
  p += alg.copy(b, p);
  u48(b, p, f.timeSigned);
  b.writeUInt16BE(f.fudge, p + 6);
  b.writeUInt16BE(mac.length, p + 8);
  p += 10;
  p += mac.copy(b, p);
  b.writeUInt16BE(f.originalId, p);
  b.writeUInt16BE(f.error, p + 2);
  b.writeUInt16BE(f.other.length, p + 4);
  f.other.copy(b, p + 6);
  return b;
}

/** Length of the TSIG RR a key's signature adds to a message (to leave room under a UDP limit). */
export function tsigRecordSize(key: TsigKey, otherLen = 0): number {
  return nameWire(key.name).length + 10 + nameWire(`${key.algorithm}.`).length + 10 + HASH[key.algorithm].size + 6 + otherLen;
}

/** A request that verified: the key, and its MAC (input to the response's MAC). */
export interface VerifiedRequest { ok: true; key: TsigKey; tsig: TsigRecord }

/**
 * A request that did not verify. `rcode` 1 (FORMERR): the TSIG RR is malformed, or its MAC is
 * longer than the hash (§5.2.2.1); answer FORMERR without a TSIG. `rcode` 9 (NOTAUTH) with
 * `error` BADKEY / BADSIG (answer with `tsigErrorRecord`, unsigned) or BADTIME / BADTRUNC (the
 * MAC verified, so `key` is set and the error reply is signed, §5.3.2).
 */
export type FailedRequest =
  | { ok: false; rcode: 1 }
  | { ok: false; rcode: 9; error: number; tsig: TsigRecord; key: TsigKey | undefined };

/** The outcome of `verifyRequest`. */
export type RequestVerdict = VerifiedRequest | FailedRequest;

/**
 * Verifies the TSIG RR at `tsigAt` (the last record of `msg`, as the decoder found it) with the
 * checks of RFC 8945 §5.2 in their order: key (BADKEY: unknown name, or an algorithm other than
 * the key's), MAC (BADSIG; a MAC shorter than max(10, hash/2) octets too), time (BADTIME: `now`
 * outside Time Signed ± Fudge), truncation (BADTRUNC: this server accepts only full-length MACs).
 * `now` is in seconds. Never throws.
 */
export function verifyRequest(msg: Buffer, tsigAt: number, keys: TsigKeyring, now: number): RequestVerdict {
  const tsig = parseTsig(msg, tsigAt);
  if (!tsig) return { ok: false, rcode: 1 };
  const key = keys.get(tsig.keyName);
  if (!key || tsig.algorithm !== `${key.algorithm}.`) return { ok: false, rcode: RCODE_NOTAUTH, error: TSIG_ERROR.BADKEY, tsig, key: undefined };
  const size = HASH[key.algorithm].size;
  if (tsig.mac.length > size) return { ok: false, rcode: 1 };
  const fields: RecordFields = tsig;
  const want = hmac(key, [unsignedView(msg, tsigAt, tsig.originalId), variables(fields)]);
  if (tsig.mac.length < Math.max(10, size / 2) || !timingSafeEqual(want.subarray(0, tsig.mac.length), tsig.mac)) {
    return { ok: false, rcode: RCODE_NOTAUTH, error: TSIG_ERROR.BADSIG, tsig, key: undefined };
  }
  if (Math.abs(now - tsig.timeSigned) > tsig.fudge) return { ok: false, rcode: RCODE_NOTAUTH, error: TSIG_ERROR.BADTIME, tsig, key };
  if (tsig.mac.length < size) return { ok: false, rcode: RCODE_NOTAUTH, error: TSIG_ERROR.BADTRUNC, tsig, key };
  return { ok: true, key, tsig };
}

/** Fields of a response's TSIG RR: the request's key and algorithm names, the reply's ID. */
function responseFields(req: TsigRecord, reply: Buffer, timeSigned: number, error: number, other: Buffer): RecordFields {
  return { keyName: req.keyName, algorithm: req.algorithm, timeSigned, fudge: DEFAULT_FUDGE, originalId: reply.readUInt16BE(0), error, other };
}

/**
 * The TSIG RR that signs `reply` (a complete message without a TSIG; append the result as the
 * last additional record and count it in ARCOUNT). The MAC covers the request MAC, the reply and
 * the TSIG variables (RFC 8945 §4.3.1, §4.3.3). `now` is in seconds.
 */
export function signResponse(reply: Buffer, req: VerifiedRequest, now: number): Buffer {
  return new TsigStreamSigner(req).sign(reply, now);
}

/**
 * The TSIG RR of an error reply to a request that failed `verifyRequest` with NOTAUTH (RFC 8945
 * §5.3.2): BADKEY and BADSIG replies are unsigned (MAC size 0, the request's time); BADTIME and
 * BADTRUNC replies are signed with the key, BADTIME with the request's Time Signed and this
 * server's time in Other Data (§5.2.3) so the client can tell how far apart the clocks are.
 * `reply` is the sealed error reply (header, question, OPT) without a TSIG.
 */
export function tsigErrorRecord(reply: Buffer, failed: Extract<FailedRequest, { rcode: 9 }>, now: number): Buffer {
  const req = failed.tsig;
  if (!failed.key) return encodeRecord(responseFields(req, reply, req.timeSigned, failed.error, Buffer.alloc(0)), Buffer.alloc(0));
  let timeSigned = now;
  let other = Buffer.alloc(0);
  if (failed.error === TSIG_ERROR.BADTIME) { timeSigned = req.timeSigned; other = Buffer.alloc(6); u48(other, 0, now); }
  const f = responseFields(req, reply, timeSigned, failed.error, other);
  const mac = hmac(failed.key, [withSize(req.mac), reply, variables(f)]);
  return encodeRecord(f, mac);
}

/**
 * Signs the messages of one multi-message response in order (RFC 8945 §5.3.1): the first like a
 * single response (request MAC, message, TSIG variables), each later one over the prior MAC, the
 * message and the TSIG timers only. Every message is signed (the RFC allows gaps of up to 99; a
 * signature per message lets a client stop at the first bad one).
 */
export class TsigStreamSigner {
  private prior: Buffer;
  private first = true;
  constructor(private readonly req: VerifiedRequest) {
    this.prior = req.tsig.mac;
  }

  /** The TSIG RR for the next message `msg` (complete, without a TSIG). `now` in seconds. */
  sign(msg: Buffer, now: number): Buffer {
    const f = responseFields(this.req.tsig, msg, now, TSIG_ERROR.NOERROR, Buffer.alloc(0));
    const mac = hmac(this.req.key, [withSize(this.prior), msg, this.first ? variables(f) : timers(f.timeSigned, f.fudge)]);
    this.first = false;
    this.prior = mac;
    return encodeRecord(f, mac);
  }
}

/** Appends a TSIG RR to a message and counts it in ARCOUNT; returns the new message. */
export function appendTsig(msg: Buffer, rr: Buffer): Buffer {
  const out = Buffer.concat([msg, rr]);
  out.writeUInt16BE(out.readUInt16BE(10) + 1, 10);
  return out;
}

/**
 * Client side (tests, and tools that send signed requests): signs `msg` (a complete message
 * without a TSIG) with `key` at `now` and returns the signed message and its MAC (needed to
 * verify the response).
 */
export function signRequest(msg: Buffer, key: TsigKey, now: number, fudge = DEFAULT_FUDGE): { msg: Buffer; mac: Buffer } {
  const f: RecordFields = { keyName: key.name, algorithm: `${key.algorithm}.`, timeSigned: now, fudge, originalId: msg.readUInt16BE(0), error: 0, other: Buffer.alloc(0) };
  const mac = hmac(key, [msg, variables(f)]);
  return { msg: appendTsig(msg, encodeRecord(f, mac)), mac };
}

/**
 * Client side: verifies the messages of a (possibly multi-message) response to a request signed
 * with `requestMac`, each carrying its TSIG RR as the last record. Returns the TSIG error of the
 * first message that fails ('BADSIG' for a wrong MAC, 'BADTIME' outside the fudge, 'unsigned' for
 * a message without a TSIG), or undefined when every message verifies.
 */
export function verifyResponseStream(msgs: readonly Buffer[], key: TsigKey, requestMac: Buffer, now: number): 'BADSIG' | 'BADTIME' | 'unsigned' | undefined {
  let prior = requestMac;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i]!;
    const at = lastRecordStart(m);
    const t = at < 0 ? undefined : parseTsig(m, at);
    if (!t) return 'unsigned';
    const view = unsignedView(m, at, t.originalId);
    const mac = hmac(key, [withSize(prior), view, i === 0 ? variables(t) : timers(t.timeSigned, t.fudge)]);
    if (t.mac.length !== mac.length || !timingSafeEqual(mac, t.mac)) return 'BADSIG';
    if (Math.abs(now - t.timeSigned) > t.fudge) return 'BADTIME';
    prior = t.mac;
  }
  return undefined;
}

/** Offset of the last record of a message (walking every section), or -1 when it has none or is malformed. */
export function lastRecordStart(m: Buffer): number {
  if (m.length < 12) return -1;
  let off = 12;
  for (let i = m.readUInt16BE(4); i > 0; i--) { off = skipName(m, off); if (off < 0) return -1; off += 4; }
  const total = m.readUInt16BE(6) + m.readUInt16BE(8) + m.readUInt16BE(10);
  let last = -1;
  for (let i = 0; i < total; i++) {
    last = off;
    const n = skipName(m, off);
    if (n < 0 || n + 10 > m.length) return -1;
    off = n + 10 + m.readUInt16BE(n + 8);
  }
  return off === m.length ? last : -1;
}

function skipName(m: Buffer, off: number): number {
  for (let guard = 0; guard < 128; guard++) {
    if (off >= m.length) return -1;
    const l = m[off]!;
    if (l === 0) return off + 1;
    if ((l & 0xc0) === 0xc0) return off + 2;
    off += l + 1;
  }
  return -1;
}
