import { isIP } from 'node:net';

/** A NOTIFY target's address (`dns.axfr.notify[].address`). */
export interface NotifyAddress { host: string; port: number; family: 4 | 6 }

/** Parses `ip:port` or `[ipv6]:port` (port 1..65535); undefined when it is neither. */
export function parseNotifyAddress(s: string): NotifyAddress | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(s);
  if (!m) return undefined;
  const host = m[1] ?? m[2]!;
  const family = isIP(host);
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  if (m[1] !== undefined ? family !== 6 : family !== 4) return undefined;
  return { host, port, family: family as 4 | 6 };
}
