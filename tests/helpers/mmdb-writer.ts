import { parseCidr } from '../../runtime/net/ip.js';

/**
 * A minimal MaxMind DB (.mmdb, format 2.0) writer for test fixtures: an IPv6 search tree with
 * 32-bit records (IPv4 networks live under ::/96, which is where readers look for them), a data
 * section holding maps, strings, numbers, booleans and arrays, and the metadata block. Enough to
 * build small City and ASN databases in code so a fresh clone tests itself.
 */

/** A value the writer can store. Integers become uint32 (or uint64 when larger), other numbers doubles. */
export type MmdbValue = string | number | boolean | MmdbValue[] | { [k: string]: MmdbValue };

/** One network and its record. */
export interface MmdbEntry { cidr: string; data: MmdbValue }

type Rec = { t: 'empty' } | { t: 'node'; n: TreeNode } | { t: 'data'; off: number };
interface TreeNode { l: Rec; r: Rec }

const EMPTY: Rec = { t: 'empty' };

function ctrl(type: number, size: number): Buffer {
  const ext = type > 7;
  const head: number[] = [];
  let sizeBytes: number[] = [];
  let s5: number;
  if (size < 29) s5 = size;
  else if (size < 285) { s5 = 29; sizeBytes = [size - 29]; }
  else if (size < 65821) { s5 = 30; const v = size - 285; sizeBytes = [v >> 8, v & 0xff]; }
  else { s5 = 31; const v = size - 65821; sizeBytes = [(v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff]; }
  head.push(((ext ? 0 : type) << 5) | s5);
  if (ext) head.push(type - 7);
  return Buffer.from([...head, ...sizeBytes]);
}

function uintBytes(v: bigint): Buffer {
  const out: number[] = [];
  while (v > 0n) { out.unshift(Number(v & 0xffn)); v >>= 8n; }
  return Buffer.from(out);
}

/** Encodes one value in the MMDB data-section format (no pointers). */
export function encodeMmdbValue(v: MmdbValue): Buffer {
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([ctrl(2, b.length), b]);
  }
  if (typeof v === 'boolean') return ctrl(14, v ? 1 : 0);
  if (typeof v === 'number') {
    if (Number.isInteger(v) && v >= 0) {
      const b = uintBytes(BigInt(v));
      return Buffer.concat([ctrl(v < 2 ** 32 ? 6 : 9, b.length), b]);
    }
    const b = Buffer.alloc(8);
    b.writeDoubleBE(v);
    return Buffer.concat([ctrl(3, 8), b]);
  }
  if (Array.isArray(v)) return Buffer.concat([ctrl(11, v.length), ...v.map(encodeMmdbValue)]);
  const keys = Object.keys(v);
  return Buffer.concat([ctrl(7, keys.length), ...keys.flatMap((k) => [encodeMmdbValue(k), encodeMmdbValue(v[k]!)])]);
}

/** Network bits of a CIDR as a 128-bit bigint; IPv4 networks are placed under ::/96. */
function networkBits(cidr: string): { bits: bigint; len: number } {
  const c = parseCidr(cidr);
  if (!c) throw new Error(`bad cidr ${cidr}`);
  if (c.family === 4) return { bits: BigInt(c.net as number), len: c.bits + 96 };
  return { bits: c.net as bigint, len: c.bits };
}

function insert(root: TreeNode, cidr: string, off: number): void {
  const { bits, len } = networkBits(cidr);
  let node = root;
  for (let depth = 0; depth < len; depth++) {
    const bit = (bits >> BigInt(127 - depth)) & 1n;
    const side = bit ? 'r' : 'l';
    if (depth === len - 1) { node[side] = { t: 'data', off }; return; }
    const cur = node[side];
    if (cur.t === 'node') { node = cur.n; continue; }
    // An empty or data record on the way down is split so the more specific network fits under it.
    const child: TreeNode = { l: cur, r: cur };
    node[side] = { t: 'node', n: child };
    node = child;
  }
}

/**
 * Builds a complete .mmdb file. Later entries override earlier ones where they overlap, so list
 * broad networks before specific ones.
 */
export function buildMmdb(opts: { databaseType: string; entries: MmdbEntry[]; description?: string }): Buffer {
  const data: Buffer[] = [];
  let dataLen = 0;
  const root: TreeNode = { l: EMPTY, r: EMPTY };
  for (const e of opts.entries) {
    const enc = encodeMmdbValue(e.data);
    insert(root, e.cidr, dataLen);
    data.push(enc);
    dataLen += enc.length;
  }
  // Number nodes breadth-first so the root is node 0.
  const order: TreeNode[] = [root];
  const index = new Map<TreeNode, number>([[root, 0]]);
  for (let i = 0; i < order.length; i++) {
    for (const r of [order[i]!.l, order[i]!.r]) {
      if (r.t === 'node' && !index.has(r.n)) { index.set(r.n, order.length); order.push(r.n); }
    }
  }
  const nodeCount = order.length;
  const tree = Buffer.alloc(nodeCount * 8);
  const recValue = (r: Rec): number => (r.t === 'empty' ? nodeCount : r.t === 'node' ? index.get(r.n)! : nodeCount + 16 + r.off);
  order.forEach((n, i) => { tree.writeUInt32BE(recValue(n.l), i * 8); tree.writeUInt32BE(recValue(n.r), i * 8 + 4); });
  const meta = encodeMmdbValue({
    node_count: nodeCount,
    record_size: 32,
    ip_version: 6,
    database_type: opts.databaseType,
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1700000000,
    description: { en: opts.description ?? 'gslbd test fixture' },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from('ABCDEF4D61784D696E642E636F6D', 'hex'), meta]);
}

/** A City-database record with a location (the fields the geo-ip algorithm reads). */
export function cityRecord(lat: number, lon: number, city = 'Test'): MmdbValue {
  // Doubles must be stored as doubles even when integral; nudge integral values off the integer.
  const dbl = (v: number) => (Number.isInteger(v) ? v + 1e-9 : v);
  return { city: { names: { en: city } }, location: { latitude: dbl(lat), longitude: dbl(lon), accuracy_radius: 100 } };
}

/** An ASN-database record. */
export function asnRecord(asn: number, org: string): MmdbValue {
  return { autonomous_system_number: asn, autonomous_system_organization: org };
}
