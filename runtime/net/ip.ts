import { isIP } from 'node:net';

/**
 * Address helpers shared by validation, the balancer and the DNS server. IPv4 addresses are
 * handled as 32-bit numbers and IPv6 as 128-bit bigints; both forms are precomputed at apply time
 * so the answer path only compares numbers.
 */

/**
 * True when `s` is a valid IPv4 or IPv6 address with no scope id and no brackets. Node's `isIP`
 * accepts `fe80::1%eth0`; a scope names an interface of one host, so an address with one cannot
 * be served in an answer, matched by a rule or shared across nodes (docs/api.md "Input rules").
 */
export function isIpAddress(s: unknown): s is string {
  return typeof s === 'string' && !s.includes('%') && isIP(s) !== 0;
}

/** True when `s` is a valid IPv4 dotted quad. */
export function isIpv4Address(s: unknown): s is string {
  return typeof s === 'string' && isIP(s) === 4;
}

/**
 * The scope id of an IPv6 literal or CIDR that carries one (`fe80::1%eth0` → `eth0`,
 * `fe80::%2/64` → `2`), else undefined. Used to name the scope in the refusal.
 */
export function scopeIdOf(s: string): string | undefined {
  const at = s.indexOf('%');
  if (at < 0) return undefined;
  const slash = s.indexOf('/', at);
  const addr = s.slice(0, slash < 0 ? undefined : slash);
  return isIP(addr) === 6 ? addr.slice(at + 1) : undefined;
}

/** Parses an IPv4 dotted quad into an unsigned 32-bit number, or -1 when invalid. */
export function ipv4ToInt(ip: string): number {
  const parts = ip.split('.');
  if (parts.length !== 4) return -1;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return -1;
    const v = Number(p);
    if (v > 255) return -1;
    n = n * 256 + v;
  }
  return n;
}

/** Parses an IPv6 address (with optional embedded IPv4) into a 128-bit bigint, or -1n when invalid. */
export function ipv6ToBigInt(ip: string): bigint {
  if (isIP(ip) !== 6) return -1n;
  let text = ip;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    // Rewrite an embedded dotted quad as two hex words so one parser handles both forms.
    const v4 = ipv4ToInt(tail);
    if (v4 < 0) return -1n;
    text = `${text.slice(0, lastColon + 1)}${((v4 >>> 16) & 0xffff).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return -1n;
  const left = halves[0] ? halves[0].split(':') : [];
  const right = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - left.length - right.length : 0;
  if (fill < 0) return -1n;
  const words = [...left, ...Array<string>(fill).fill('0'), ...right];
  if (words.length !== 8) return -1n;
  let n = 0n;
  for (const w of words) n = (n << 16n) | BigInt(parseInt(w, 16));
  return n;
}

/** A parsed CIDR: family, network number and prefix length. */
export interface Cidr {
  family: 4 | 6;
  /** network address: number for IPv4, bigint for IPv6 */
  net: number | bigint;
  bits: number;
  text: string;
}

/** Parses `addr/len`. Host bits are masked off. Returns undefined when invalid or scoped. */
export function parseCidr(text: unknown): Cidr | undefined {
  if (typeof text !== 'string' || text.includes('%')) return undefined;
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const addr = text.slice(0, slash);
  const lenText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(lenText)) return undefined;
  const bits = Number(lenText);
  const fam = isIP(addr);
  if (fam === 4) {
    if (bits > 32) return undefined;
    const n = ipv4ToInt(addr);
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    return { family: 4, net: (n & mask) >>> 0, bits, text };
  }
  if (fam === 6) {
    if (bits > 128) return undefined;
    const n = ipv6ToBigInt(addr);
    const mask = bits === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - bits)) - 1n);
    return { family: 6, net: n & mask, bits, text };
  }
  return undefined;
}

/** A parsed client address, ready for CIDR matching. */
export type ParsedIp = { family: 4; n: number } | { family: 6; n: bigint };

/** Parses an IP for matching; IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is treated as IPv4. */
export function parseIp(ip: string): ParsedIp | undefined {
  if (ip.startsWith('::ffff:') && ip.includes('.')) ip = ip.slice(7);
  const fam = isIP(ip);
  if (fam === 4) return { family: 4, n: ipv4ToInt(ip) };
  if (fam === 6) {
    const n = ipv6ToBigInt(ip);
    // an IPv4-mapped address in hex form (`::ffff:a9fe:a9fe`, as URLs normalise it) is its IPv4 address too
    return n >> 32n === 0xffffn ? { family: 4, n: Number(n & 0xffffffffn) } : { family: 6, n };
  }
  return undefined;
}

/** True when the address lies inside the CIDR. */
export function cidrContains(c: Cidr, ip: ParsedIp): boolean {
  if (c.family !== ip.family) return false;
  if (c.family === 4) {
    const mask = c.bits === 0 ? 0 : (0xffffffff << (32 - c.bits)) >>> 0;
    return ((ip.n as number) & mask) >>> 0 === c.net;
  }
  const mask = c.bits === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - c.bits)) - 1n);
  return ((ip.n as bigint) & mask) === c.net;
}

/** True for a syntactically valid fully-qualified DNS name with a trailing dot (RFC 1035 lengths). */
export function isFqdn(name: unknown): name is string {
  if (typeof name !== 'string' || !name.endsWith('.') || name.length > 254) return false;
  if (name === '.') return false;
  const labels = name.slice(0, -1).split('.');
  return labels.every((l) => l.length > 0 && l.length <= 63 && /^[A-Za-z0-9_*]([A-Za-z0-9_-]*[A-Za-z0-9_])?$/.test(l));
}

/** True for a valid DNS domain with or without the trailing dot. */
export function isDomainName(name: unknown): name is string {
  if (typeof name !== 'string') return false;
  return isFqdn(name.endsWith('.') ? name : `${name}.`);
}
