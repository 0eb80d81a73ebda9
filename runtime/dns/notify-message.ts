import { randomInt } from 'node:crypto';
import { signRequest, verifyResponseStream, type TsigKey } from './tsig.js';
import { nameToWire } from './wire-reply.js';

/** DNS opcode NOTIFY (RFC 1996 §3.1). */
export const OPCODE_NOTIFY = 4;
const TYPE_SOA = 6;
const CLASS_IN = 1;
/** The SOA's TTL in the answer section: the answer path's (answer.ts). */
const SOA_TTL = 3600;

/** A 16-bit message ID from the CSPRNG (an off-path spoofer must guess it). */
export const randomId = (): number => randomInt(0, 0x10000);

/**
 * A NOTIFY for `zone` (RFC 1996 §3.7): opcode NOTIFY, AA set, the question `<zone> IN SOA`, and
 * the zone's SOA in the answer section (§3.7 allows it; a secondary may take its serial as a hint).
 * With `key`, TSIG-signed (tsig.ts `signRequest`); `mac` is then the request MAC the answer is
 * verified against. `now` in seconds.
 */
export function notifyMessage(id: number, zone: string, soa: Buffer, key: TsigKey | undefined, now: number): { msg: Buffer; mac: Buffer | undefined } {
  const name = nameToWire(zone);
  const b = Buffer.alloc(12 + name.length + 4 + 2 + 10 + soa.length);
  b.writeUInt16BE(id, 0);
  b.writeUInt16BE((OPCODE_NOTIFY << 11) | 0x0400, 2);
  b.writeUInt16BE(1, 4);
  b.writeUInt16BE(1, 6);
  let p = 12 + name.copy(b, 12);
  b.writeUInt16BE(TYPE_SOA, p);
  b.writeUInt16BE(CLASS_IN, p + 2);
  p += 4;
  b.writeUInt16BE(0xc00c, p); // the owner: the question's name
  b.writeUInt16BE(TYPE_SOA, p + 2);
  b.writeUInt16BE(CLASS_IN, p + 4);
  b.writeUInt32BE(SOA_TTL, p + 6);
  b.writeUInt16BE(soa.length, p + 10);
  soa.copy(b, p + 12);
  if (!key) return { msg: b, mac: undefined };
  return signRequest(b, key, now);
}

/**
 * Reads a datagram as the answer to a NOTIFY: its ID, and its RCODE when it is a response (QR) with
 * opcode NOTIFY that, for a signed NOTIFY, carries a TSIG verifying against `mac` (RFC 8945 §5.3).
 * undefined: not an answer to take (another opcode, a query, a bad or missing signature).
 */
export function notifyAnswer(msg: Buffer, key: TsigKey | undefined, mac: Buffer | undefined, now: number): number | undefined {
  if (msg.length < 12) return undefined;
  const flags = msg.readUInt16BE(2);
  if ((flags & 0x8000) === 0 || ((flags >> 11) & 0xf) !== OPCODE_NOTIFY) return undefined;
  if (key && mac && verifyResponseStream([msg], key, mac, now) !== undefined) return undefined;
  return flags & 0xf;
}
