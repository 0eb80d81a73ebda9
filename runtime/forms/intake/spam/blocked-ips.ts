import { cidrContains, parseCidr, parseIp, type Cidr } from '../../../net/ip.js';

/** A compiled `blocked_ips` entry: the range and the entry as written (for the reason). */
export interface BlockedRange extends Cidr { entry: string }

/** `::ffff:192.0.2.1` → `192.0.2.1`; any other address as it is. */
function unmapped(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1]! : ip;
}

/** Compiles `blocked_ips` (IPs and CIDR ranges, validated when the form was saved); a plain IP is a /32 or /128. */
export function compileBlockList(entries: readonly string[]): BlockedRange[] {
  const out: BlockedRange[] = [];
  for (const entry of entries) {
    const text = unmapped(entry.trim());
    const c = parseCidr(text.includes('/') ? text : `${text}/${text.includes(':') ? 128 : 32}`);
    if (c) out.push({ ...c, entry });
  }
  return out;
}

/** Spam when the client address is in a blocked range (an IPv4-mapped IPv6 address counts as its IPv4). */
export function blockedIpReason(ip: string, list: readonly BlockedRange[]): string | null {
  if (list.length === 0) return null;
  const addr = unmapped(ip);
  const parsed = parseIp(addr);
  if (!parsed) return null;
  const hit = list.find((c) => cidrContains(c, parsed));
  return hit ? `address ${addr} is blocked (${hit.entry})` : null;
}
