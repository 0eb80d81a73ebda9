/**
 * RUM subnets (gslb-api.md §2 "Filter-chain steps": /24 for IPv4, /48 for IPv6). A subnet is kept
 * as a short key: the first three octets of an IPv4 address (`203.0.113`) or the first three
 * 16-bit groups of an IPv6 address, lower-case hex without leading zeros (`2001:db8:0`). The key is
 * computed on the DNS answer path for every `rum` step, so it reads the text without parsing it
 * into numbers where it can. Pure.
 */

/** The subnet key of an address in text form, or undefined for text that is not an address. */
export function subnetKey(ip: string): string | undefined {
  if (ip.indexOf(':') < 0) {
    const i = ip.lastIndexOf('.');
    return i > 0 && ip.indexOf('.') < i ? ip.slice(0, i) : undefined;
  }
  if (ip.startsWith('::ffff:') && ip.indexOf('.') > 0) return subnetKey(ip.slice(7));
  const pct = ip.indexOf('%');
  const s = (pct >= 0 ? ip.slice(0, pct) : ip).toLowerCase();
  const dbl = s.indexOf('::');
  let groups: string[];
  if (dbl < 0) {
    groups = s.split(':', 3);
  } else {
    const head = dbl === 0 ? [] : s.slice(0, dbl).split(':');
    if (head.length >= 3) groups = head.slice(0, 3);
    else {
      const tail = dbl + 2 >= s.length ? [] : s.slice(dbl + 2).split(':');
      const tailGroups = tail.length > 0 && tail[tail.length - 1]!.includes('.') ? tail.length + 1 : tail.length;
      const missing = 8 - head.length - tailGroups;
      if (missing < 1) return undefined;
      groups = [...head, ...new Array<string>(missing).fill('0'), ...tail].slice(0, 3);
    }
  }
  if (groups.length < 3) return undefined;
  let out = '';
  for (let i = 0; i < 3; i++) {
    const g = groups[i]!;
    if (g.length === 0 || g.length > 4 || !/^[0-9a-f]+$/.test(g)) return undefined;
    out += (i ? ':' : '') + parseInt(g, 16).toString(16);
  }
  return out;
}

/** The CIDR a subnet key stands for (`203.0.113.0/24`, `2001:db8:0::/48`), for status pages. */
export function subnetCidr(key: string): string {
  return key.includes(':') ? `${key}::/48` : `${key}.0/24`;
}
