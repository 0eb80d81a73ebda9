import dnsPacket from 'dns-packet';
import { parseCidr } from '../net/ip.js';

/** Query types accepted by name. */
export const QTYPES: Record<string, number> = { A: 1, NS: 2, SOA: 6, AAAA: 28, ANY: 255 };

/** ECS option data (RFC 7871 §6) for a CIDR: family, source prefix, scope 0, the masked address bytes. */
export function ecsOptionData(cidr: string): Buffer | undefined {
  const c = parseCidr(cidr);
  if (!c) return undefined;
  const full = Buffer.alloc(c.family === 4 ? 4 : 16);
  if (c.family === 4) full.writeUInt32BE(c.net as number);
  else { full.writeBigUInt64BE((c.net as bigint) >> 64n, 0); full.writeBigUInt64BE((c.net as bigint) & 0xffffffffffffffffn, 8); }
  const alen = Math.ceil(c.bits / 8);
  const head = Buffer.from([0, c.family === 4 ? 1 : 2, c.bits, 0]);
  return Buffer.concat([head, full.subarray(0, alen)]);
}

/**
 * Builds the wire form of a query, as a resolver would send it: RD clear, EDNS0 with a 1232-byte
 * payload, and the Client Subnet option when `ecsSubnet` is given. Used by POST /simulate so the
 * simulated query runs through the server's own decoder and answer path.
 */
export function buildQueryPacket(name: string, qtype: number, ecsSubnet?: string): Buffer {
  const ecs = ecsSubnet ? ecsOptionData(ecsSubnet) : undefined;
  return dnsPacket.encode({
    type: 'query', id: 1, flags: 0,
    questions: [{ name: name.replace(/\.$/, ''), type: (Object.keys(QTYPES).find((k) => QTYPES[k] === qtype) ?? 'A') as 'A', class: 'IN' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0, options: ecs ? [{ code: 8, data: ecs } as never] : [] } as never],
  });
}
