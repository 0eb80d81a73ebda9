/**
 * The sections of an RFC 2136 UPDATE message: the zone (the question section), prerequisites (the
 * answer section) and updates (the authority section); the additional section holds at most the
 * TSIG, which the answer path has verified already. Pure: bytes in, records out.
 */

/** One resource record of a prerequisite or update section, its owner name lower-cased and fully qualified. */
export interface UpdateRr { name: string; type: number; cls: number; ttl: number; rdata: Buffer }

/** A parsed UPDATE, or the rcode of a message that is not one (FORMERR). */
export type ParsedUpdate = { ok: true; zone: string; prereqs: UpdateRr[]; updates: UpdateRr[] } | { ok: false; rcode: number };

const FORMERR = { ok: false, rcode: 1 } as const;

/** Reads a (possibly compressed) name at `at`; returns it with the offset after it in the record. */
function readName(msg: Buffer, at: number): { name: string; next: number } | undefined {
  const labels: string[] = [];
  let pos = at;
  let next = -1;
  for (let hops = 0; hops < 64; hops++) {
    if (pos >= msg.length) return undefined;
    const len = msg[pos]!;
    if (len === 0) {
      if (next < 0) next = pos + 1;
      const name = labels.length === 0 ? '.' : `${labels.join('.')}.`;
      return name.length > 255 ? undefined : { name: name.toLowerCase(), next };
    }
    if ((len & 0xc0) === 0xc0) {
      if (pos + 1 >= msg.length) return undefined;
      if (next < 0) next = pos + 2;
      pos = ((len & 0x3f) << 8) | msg[pos + 1]!;
      continue;
    }
    if ((len & 0xc0) !== 0 || pos + 1 + len > msg.length) return undefined;
    labels.push(msg.toString('latin1', pos + 1, pos + 1 + len));
    pos += 1 + len;
  }
  return undefined;
}

/** Reads `count` records from `at`; undefined when they do not fit the message. */
function readRrs(msg: Buffer, at: number, count: number): { rrs: UpdateRr[]; next: number } | undefined {
  const rrs: UpdateRr[] = [];
  let pos = at;
  for (let i = 0; i < count; i++) {
    const n = readName(msg, pos);
    if (!n || n.next + 10 > msg.length) return undefined;
    const p = n.next;
    const rdlen = msg.readUInt16BE(p + 8);
    if (p + 10 + rdlen > msg.length) return undefined;
    rrs.push({ name: n.name, type: msg.readUInt16BE(p), cls: msg.readUInt16BE(p + 2), ttl: msg.readUInt32BE(p + 4), rdata: msg.subarray(p + 10, p + 10 + rdlen) });
    pos = p + 10 + rdlen;
  }
  return { rrs, next: pos };
}

/**
 * Parses an UPDATE (opcode 5). The zone section must hold exactly one SOA question of class IN
 * (RFC 2136 §3.1.1); every other malformation is FORMERR.
 */
export function parseUpdate(msg: Buffer): ParsedUpdate {
  if (msg.length < 12) return FORMERR;
  const zocount = msg.readUInt16BE(4);
  const prcount = msg.readUInt16BE(6);
  const upcount = msg.readUInt16BE(8);
  if (zocount !== 1) return FORMERR;
  const z = readName(msg, 12);
  if (!z || z.next + 4 > msg.length) return FORMERR;
  if (msg.readUInt16BE(z.next) !== 6 || msg.readUInt16BE(z.next + 2) !== 1) return FORMERR;
  const pre = readRrs(msg, z.next + 4, prcount);
  if (!pre) return FORMERR;
  const up = readRrs(msg, pre.next, upcount);
  if (!up) return FORMERR;
  return { ok: true, zone: z.name, prereqs: pre.rrs, updates: up.rrs };
}
