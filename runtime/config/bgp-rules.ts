import type { Config } from './types.js';
import { parseDuration } from './duration.js';
import { ipv4ToInt, parseCidr } from '../net/ip.js';

/** AS_TRANS (RFC 6793 §9): reserved as the 2-byte stand-in for 4-byte ASNs, never a real ASN. */
const AS_TRANS = 23456;
/** The hold time is a 16-bit count of seconds in OPEN (RFC 4271 §4.2). */
const MAX_HOLD_S = 65535;

/** The rule a prefix to announce breaks, or undefined: IPv4 only, host bits zero. */
function prefixRule(text: string): string | undefined {
  const c = parseCidr(text);
  if (!c) return undefined; // the schema's cidr format reports it
  if (c.family !== 4) return 'IPv6 prefixes are not announced: sessions carry IPv4 unicast only (docs/bgp.md)';
  const addr = text.slice(0, text.indexOf('/'));
  const n = Number(c.net);
  if (ipv4ToInt(addr) !== n) {
    return `host bits are set; the network is ${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}/${c.bits}`;
  }
  return undefined;
}

/** The rule a duration breaks as a BGP time: whole seconds, at most 65535 s. */
function secondsRule(ms: number): string | undefined {
  if (ms % 1000 !== 0) return 'must be a whole number of seconds (BGP carries seconds)';
  if (ms > MAX_HOLD_S * 1000) return `must be at most ${MAX_HOLD_S}s`;
  return undefined;
}

/**
 * The `bgp` rules a schema cannot express (gslb-config-auth.md §2 "Validation at startup",
 * docs/bgp.md): localASN and routerID when enabled, non-zero ASNs other than AS_TRANS, hold time 0
 * or at least 3 s, keepalive below the hold time, one entry per peer address, no TCP MD5
 * passwords (not supported), IPv4 prefixes with host bits zero. Pure; appends to `add`.
 */
export function checkBgpRules(b: Config['bgp'], add: (path: (string | number)[], value: unknown, rule: string) => void): void {
  if (b.enabled) {
    if (!b.localASN) add(['bgp', 'localASN'], b.localASN, 'required and non-zero when bgp.enabled is true');
    if (!b.routerID) add(['bgp', 'routerID'], undefined, 'required when bgp.enabled is true');
  }
  if (b.localASN === AS_TRANS) add(['bgp', 'localASN'], b.localASN, 'must not be AS_TRANS (23456, RFC 6793)');
  const hold = parseDuration(b.holdTime);
  const keep = parseDuration(b.keepAliveTime);
  if (hold !== undefined) {
    if (hold !== 0 && hold < 3000) add(['bgp', 'holdTime'], b.holdTime, 'must be 0 or at least 3s (RFC 4271)');
    else {
      const rule = secondsRule(hold);
      if (rule) add(['bgp', 'holdTime'], b.holdTime, rule);
    }
  }
  if (keep !== undefined) {
    const rule = secondsRule(keep);
    if (rule) add(['bgp', 'keepAliveTime'], b.keepAliveTime, rule);
    else if (hold !== undefined && hold > 0 && keep <= 0) add(['bgp', 'keepAliveTime'], b.keepAliveTime, 'must be at least 1s when bgp.holdTime is not 0');
    else if (hold !== undefined && hold > 0 && keep >= hold) add(['bgp', 'keepAliveTime'], b.keepAliveTime, 'must be less than bgp.holdTime (a third of it is usual)');
  }
  const seen = new Map<string, number>();
  b.peers.forEach((p, i) => {
    if (p.remoteASN === 0) add(['bgp', 'peers', i, 'remoteASN'], 0, 'must be non-zero');
    if (p.remoteASN === AS_TRANS) add(['bgp', 'peers', i, 'remoteASN'], p.remoteASN, 'must not be AS_TRANS (23456, RFC 6793)');
    const first = seen.get(p.remoteAddr);
    if (first !== undefined) add(['bgp', 'peers', i, 'remoteAddr'], p.remoteAddr, `is already the address of bgp.peers[${first}]`);
    else seen.set(p.remoteAddr, i);
    // Node cannot set TCP_MD5SIG on its sockets; a password that is silently not used would leave
    // the operator believing the session is protected (docs/bgp.md "TCP MD5").
    if (p.password !== undefined) add(['bgp', 'peers', i, 'password'], '[redacted]', 'TCP MD5 signatures (RFC 2385) are not supported; remove the key and protect the session another way (docs/bgp.md)');
  });
  b.nodePrefixes.forEach((p, i) => {
    const rule = prefixRule(p);
    if (rule) add(['bgp', 'nodePrefixes', i], p, rule);
  });
  b.poolPrefixes.forEach((e, i) => e.prefixes.forEach((p, j) => {
    const rule = prefixRule(p);
    if (rule) add(['bgp', 'poolPrefixes', i, 'prefixes', j], p, rule);
  }));
}
