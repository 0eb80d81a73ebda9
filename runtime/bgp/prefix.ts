import { BgpProtocolError, ErrCode, UpdateSub } from './errors.js';

/** An IPv4 prefix as NLRI carries it: the network (host bits zero) and its length. */
export interface Prefix4 { net: number; len: number }

const maskOf = (len: number) => (len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0);

/** `10.0.0.0/8` → {net, len}; undefined for anything else (IPv6, host bits set, bad syntax). */
export function parsePrefix4(text: string): Prefix4 | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text);
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  const len = Number(m[5]);
  if (octets.some((o) => o > 255) || len > 32) return undefined;
  const net = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  if ((net & ~maskOf(len)) >>> 0 !== 0) return undefined;
  return { net, len };
}

/** {net, len} → `10.0.0.0/8`. */
export function formatPrefix4(p: Prefix4): string {
  return `${p.net >>> 24}.${(p.net >>> 16) & 255}.${(p.net >>> 8) & 255}.${p.net & 255}/${p.len}`;
}

/** NLRI encoding (RFC 4271 §4.3): the length in bits, then the fewest whole bytes of the network. */
export function encodePrefix4(p: Prefix4): Buffer {
  const n = Math.ceil(p.len / 8);
  const out = Buffer.alloc(1 + n);
  out.writeUInt8(p.len, 0);
  for (let i = 0; i < n; i++) out.writeUInt8((p.net >>> (24 - 8 * i)) & 255, 1 + i);
  return out;
}

/**
 * Reads a run of NLRI (withdrawn routes or announced ones). A length above 32 or a prefix running
 * past the field is an Invalid Network Field (RFC 4271 §6.3); trailing bits beyond the length are
 * irrelevant (§4.3) and cleared.
 */
export function decodePrefixes4(buf: Buffer): Prefix4[] {
  const out: Prefix4[] = [];
  let i = 0;
  while (i < buf.length) {
    const len = buf.readUInt8(i);
    const n = Math.ceil(len / 8);
    if (len > 32 || i + 1 + n > buf.length) throw new BgpProtocolError(ErrCode.Update, UpdateSub.InvalidNetworkField, Buffer.alloc(0), `prefix length ${len} at offset ${i}`);
    let net = 0;
    for (let k = 0; k < 4; k++) net = (net << 8) | (k < n ? buf.readUInt8(i + 1 + k) : 0);
    out.push({ net: (net & maskOf(len)) >>> 0, len });
    i += 1 + n;
  }
  return out;
}
