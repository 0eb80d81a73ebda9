import { BgpProtocolError, ErrCode, UpdateSub } from './errors.js';
import { frameMessage, HEADER_LEN, MAX_MESSAGE_LEN, MsgType } from './header.js';
import { AS_TRANS } from './open.js';
import { decodePrefixes4, encodePrefix4, type Prefix4 } from './prefix.js';

/** Path attribute type codes (RFC 4271 §5.1, RFC 6793 AS4_PATH, RFC 4760 MP_REACH/MP_UNREACH). */
export const Attr = {
  Origin: 1, AsPath: 2, NextHop: 3, Med: 4, LocalPref: 5, AtomicAggregate: 6, Aggregator: 7,
  MpReach: 14, MpUnreach: 15, As4Path: 17, As4Aggregator: 18,
} as const;

const F_OPTIONAL = 0x80;
const F_TRANSITIVE = 0x40;
const F_PARTIAL = 0x20;
const F_EXTENDED = 0x10;
const AS_SEQUENCE = 2;
const WELL_KNOWN = new Set<number>([Attr.Origin, Attr.AsPath, Attr.NextHop, Attr.LocalPref, Attr.AtomicAggregate]);
/** attributes with one fixed length */
const FIXED_LEN: Record<number, number> = { [Attr.Origin]: 1, [Attr.NextHop]: 4, [Attr.Med]: 4, [Attr.LocalPref]: 4, [Attr.AtomicAggregate]: 0 };

/** The attributes we send with every announcement: ORIGIN IGP always. */
export interface OutAttributes {
  /** our path: [localASN] to an eBGP peer, [] to an iBGP peer */
  asPath: number[];
  nextHop: string;
  /** iBGP only (RFC 4271 §5.1.5) */
  localPref?: number | undefined;
}

/** What a received UPDATE says; parsed to check it, then ignored (we install no routes). */
export interface UpdateMessage {
  withdrawn: Prefix4[];
  nlri: Prefix4[];
  origin?: number;
  asPath?: number[][];
  nextHop?: string;
  localPref?: number;
  /** every attribute type code, in order */
  attrTypes: number[];
}

function attribute(flags: number, type: number, value: Buffer): Buffer {
  const ext = value.length > 255;
  const head = Buffer.alloc(ext ? 4 : 3);
  head.writeUInt8(flags | (ext ? F_EXTENDED : 0), 0);
  head.writeUInt8(type, 1);
  if (ext) head.writeUInt16BE(value.length, 2); else head.writeUInt8(value.length, 2);
  return Buffer.concat([head, value]);
}

function asPathValue(asns: number[], width: 2 | 4): Buffer {
  if (asns.length === 0) return Buffer.alloc(0);
  const out = Buffer.alloc(2 + asns.length * width);
  out.writeUInt8(AS_SEQUENCE, 0);
  out.writeUInt8(asns.length, 1);
  asns.forEach((a, i) => {
    if (width === 4) out.writeUInt32BE(a, 2 + 4 * i);
    else out.writeUInt16BE(a > 0xffff ? AS_TRANS : a, 2 + 2 * i);
  });
  return out;
}

/**
 * The path attributes of our announcements. With 4-octet AS negotiated, AS_PATH carries 4-byte
 * ASNs; without it, 2-byte ASNs with AS_TRANS standing in for larger ones, plus AS4_PATH with the
 * real path (RFC 6793 §4.2.2).
 */
export function encodeAttributes(a: OutAttributes, fourOctet: boolean): Buffer {
  const nh = Buffer.from(a.nextHop.split('.').map(Number));
  const parts = [
    attribute(F_TRANSITIVE, Attr.Origin, Buffer.from([0])),
    attribute(F_TRANSITIVE, Attr.AsPath, asPathValue(a.asPath, fourOctet ? 4 : 2)),
    attribute(F_TRANSITIVE, Attr.NextHop, nh),
  ];
  if (a.localPref !== undefined) {
    const lp = Buffer.alloc(4);
    lp.writeUInt32BE(a.localPref);
    parts.push(attribute(F_TRANSITIVE, Attr.LocalPref, lp));
  }
  if (!fourOctet && a.asPath.some((x) => x > 0xffff)) parts.push(attribute(F_OPTIONAL | F_TRANSITIVE, Attr.As4Path, asPathValue(a.asPath, 4)));
  return Buffer.concat(parts);
}

/** An UPDATE message from its three raw fields: withdrawn routes, path attributes, NLRI (RFC 4271 §4.3). */
export function updateMessage(withdrawn: Buffer, attrs: Buffer, nlri: Buffer): Buffer {
  const body = Buffer.alloc(4 + withdrawn.length + attrs.length + nlri.length);
  body.writeUInt16BE(withdrawn.length, 0);
  withdrawn.copy(body, 2);
  body.writeUInt16BE(attrs.length, 2 + withdrawn.length);
  attrs.copy(body, 4 + withdrawn.length);
  nlri.copy(body, 4 + withdrawn.length + attrs.length);
  return frameMessage(MsgType.Update, body);
}

/** Packs prefixes into runs of at most `room` bytes of NLRI. */
function packPrefixes(prefixes: Prefix4[], room: number): Buffer[] {
  const out: Buffer[] = [];
  let cur: Buffer[] = [];
  let size = 0;
  for (const p of prefixes) {
    const enc = encodePrefix4(p);
    if (size + enc.length > room) { out.push(Buffer.concat(cur)); cur = []; size = 0; }
    cur.push(enc);
    size += enc.length;
  }
  if (cur.length) out.push(Buffer.concat(cur));
  return out;
}

/**
 * The UPDATE messages that withdraw `withdrawn` and announce `announced` with `attrs`: withdrawals
 * first, in messages without attributes, then announcements, each message within 4096 bytes.
 */
export function encodeUpdates(withdrawn: Prefix4[], announced: Prefix4[], attrs: OutAttributes, fourOctet: boolean): Buffer[] {
  const fixed = HEADER_LEN + 4;
  const out = packPrefixes(withdrawn, MAX_MESSAGE_LEN - fixed).map((w) => updateMessage(w, Buffer.alloc(0), Buffer.alloc(0)));
  if (announced.length) {
    const enc = encodeAttributes(attrs, fourOctet);
    for (const n of packPrefixes(announced, MAX_MESSAGE_LEN - fixed - enc.length)) out.push(updateMessage(Buffer.alloc(0), enc, n));
  }
  return out;
}

const updateError = (sub: number, detail: string, data: Buffer = Buffer.alloc(0)) => new BgpProtocolError(ErrCode.Update, sub, data, detail);

function readAsPath(v: Buffer, width: 2 | 4, whole: Buffer): number[][] {
  const segs: number[][] = [];
  let i = 0;
  while (i < v.length) {
    if (i + 2 > v.length) throw updateError(UpdateSub.MalformedAsPath, 'truncated AS_PATH segment', whole);
    const type = v.readUInt8(i);
    const count = v.readUInt8(i + 1);
    if (type < 1 || type > 4) throw updateError(UpdateSub.MalformedAsPath, `AS_PATH segment type ${type}`, whole);
    if (i + 2 + count * width > v.length) throw updateError(UpdateSub.MalformedAsPath, 'AS_PATH segment runs past the attribute', whole);
    const seg: number[] = [];
    for (let k = 0; k < count; k++) seg.push(width === 4 ? v.readUInt32BE(i + 2 + 4 * k) : v.readUInt16BE(i + 2 + 2 * k));
    segs.push(seg);
    i += 2 + count * width;
  }
  return segs;
}

/** Checks one attribute's flags and length and reads the ones we know into `out`. */
function readAttribute(flags: number, type: number, v: Buffer, whole: Buffer, fourOctet: boolean, out: UpdateMessage): void {
  if (WELL_KNOWN.has(type) && (flags & (F_OPTIONAL | F_TRANSITIVE | F_PARTIAL)) !== F_TRANSITIVE) {
    throw updateError(UpdateSub.AttributeFlags, `flags 0x${flags.toString(16)} on well-known attribute ${type}`, whole);
  }
  if (!(flags & F_OPTIONAL) && !WELL_KNOWN.has(type)) throw updateError(UpdateSub.UnrecognizedWellKnown, `unrecognised well-known attribute ${type}`, whole);
  const fixed = FIXED_LEN[type];
  if (fixed !== undefined && v.length !== fixed) throw updateError(UpdateSub.AttributeLength, `attribute ${type} of length ${v.length}`, whole);
  switch (type) {
    case Attr.Origin:
      if (v.readUInt8(0) > 2) throw updateError(UpdateSub.InvalidOrigin, `ORIGIN ${v.readUInt8(0)}`, whole);
      out.origin = v.readUInt8(0);
      break;
    case Attr.AsPath:
      out.asPath = readAsPath(v, fourOctet ? 4 : 2, whole);
      break;
    case Attr.NextHop: {
      const first = v.readUInt8(0);
      if (v.readUInt32BE(0) === 0 || first >= 224) throw updateError(UpdateSub.InvalidNextHop, `NEXT_HOP ${[...v].join('.')}`, whole);
      out.nextHop = [...v].join('.');
      break;
    }
    case Attr.LocalPref:
      out.localPref = v.readUInt32BE(0);
      break;
    default:
      break; // optional attributes we do not use are skipped
  }
}

/**
 * Reads and checks an UPDATE body (RFC 4271 §6.3): field lengths that fit the message (else
 * Malformed Attribute List), no attribute twice, flags and lengths of known attributes, ORIGIN,
 * AS_PATH and NEXT_HOP values, NLRI fields, and the well-known attributes an announcement needs
 * (Missing Well-known Attribute, the type code as data). Throws BgpProtocolError.
 */
export function decodeUpdate(body: Buffer, fourOctet: boolean): UpdateMessage {
  const wLen = body.readUInt16BE(0);
  if (2 + wLen + 2 > body.length) throw updateError(UpdateSub.MalformedAttributeList, `withdrawn routes length ${wLen} runs past the message`);
  const withdrawn = decodePrefixes4(body.subarray(2, 2 + wLen));
  const aLen = body.readUInt16BE(2 + wLen);
  const aStart = 4 + wLen;
  if (aStart + aLen > body.length) throw updateError(UpdateSub.MalformedAttributeList, `path attribute length ${aLen} runs past the message`);
  const out: UpdateMessage = { withdrawn, nlri: [], attrTypes: [] };
  const attrs = body.subarray(aStart, aStart + aLen);
  let i = 0;
  while (i < attrs.length) {
    if (i + 3 > attrs.length) throw updateError(UpdateSub.MalformedAttributeList, 'truncated attribute header');
    const flags = attrs.readUInt8(i);
    const type = attrs.readUInt8(i + 1);
    const ext = (flags & F_EXTENDED) !== 0;
    if (ext && i + 4 > attrs.length) throw updateError(UpdateSub.MalformedAttributeList, 'truncated attribute header');
    const len = ext ? attrs.readUInt16BE(i + 2) : attrs.readUInt8(i + 2);
    const vStart = i + (ext ? 4 : 3);
    if (vStart + len > attrs.length) throw updateError(UpdateSub.MalformedAttributeList, `attribute ${type} of length ${len} runs past the attributes`);
    if (out.attrTypes.includes(type)) throw updateError(UpdateSub.MalformedAttributeList, `attribute ${type} appears twice`);
    out.attrTypes.push(type);
    readAttribute(flags, type, attrs.subarray(vStart, vStart + len), attrs.subarray(i, vStart + len), fourOctet, out);
    i = vStart + len;
  }
  out.nlri = decodePrefixes4(body.subarray(aStart + aLen));
  if (out.nlri.length) {
    for (const t of [Attr.Origin, Attr.AsPath, Attr.NextHop]) {
      if (!out.attrTypes.includes(t)) throw updateError(UpdateSub.MissingWellKnown, `announcement without attribute ${t}`, Buffer.from([t]));
    }
  }
  return out;
}
