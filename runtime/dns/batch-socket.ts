import { createRequire } from 'node:module';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.js';

/**
 * The batched UDP socket of the DNS answer path (native/udp-batch). Node's dgram costs one
 * recvmsg, one JS callback and one sendmsg per packet; the addon receives up to `BATCH` packets
 * with one recvmmsg into memory shared with JS, calls back once per batch, and sends all replies
 * written into the shared memory with one sendmmsg (see docs/dns.md). When the addon is missing,
 * fails to load, or GSLBD_DNS_UDP_BATCH is 0/off/false, `batchSupport()` says why and the server
 * keeps using dgram.
 */

interface Native {
  open(address: string, port: number, onBatch: (count: number) => void, reusePort?: boolean, coalesceUs?: number): NativeHandle;
  close(h: NativeHandle): void;
  sendTo(h: NativeHandle, data: Uint8Array, family: number, addr: Uint8Array, port: number): boolean;
  stats(h: NativeHandle): BatchStats;
  BATCH: number; RX_SLOT: number; TX_SLOT: number; TX_OFF: number; META_OFF: number; ADDR_OFF: number; MEM_SIZE: number;
  /** absent in a build from before the queue ages */
  AGE_OFF?: number;
}
interface NativeHandle { port: number; family: 4 | 6; mem: ArrayBuffer }

/**
 * Counters kept by the addon. `batches`: callbacks into JavaScript (received / batches is the mean
 * batch size); `ticks`: reads by the coalescing timer. Both are absent in a build from before
 * receive coalescing.
 */
export interface BatchStats {
  received: number; sent: number; dropped: number; truncated: number; sendErrors: number; closed: boolean;
  batches?: number; ticks?: number;
}

/** How `BatchSocket.open` sets up its socket. */
export interface BatchSocketOptions {
  /** SO_REUSEPORT before bind, so the DNS workers' sockets share the address (docs/dns.md "Workers") */
  reusePort?: boolean;
  /**
   * Receive coalescing window in microseconds (dns.udpCoalesce, docs/dns.md "Receive coalescing"):
   * when wakeups by the socket come closer together than this, a timer reads it every
   * `coalesceUs` instead, so one callback answers what arrived in the meantime. 0 or absent: off.
   */
  coalesceUs?: number;
}

let native: Native | undefined;
let loadError: string | undefined;
let loaded = false;

const disabledByEnv = (): boolean => /^(0|off|false|no)$/i.test(process.env.GSLBD_DNS_UDP_BATCH ?? '');

function load(): Native | undefined {
  if (loaded) return native;
  loaded = true;
  try {
    const req = createRequire(join(PACKAGE_ROOT, 'package.json'));
    const m = req(join(PACKAGE_ROOT, 'native', 'udp-batch', 'build', 'Release', 'udp_batch.node')) as Partial<Native>;
    if (typeof m.open !== 'function' || typeof m.sendTo !== 'function' || !m.BATCH) throw new Error('udp_batch addon has no open/sendTo (placeholder build?)');
    native = m as Native;
  } catch (err) {
    loadError = err instanceof Error ? err.message : String(err);
  }
  return native;
}

/** Whether the batched path can be used, and if not, why. */
export function batchSupport(): { available: boolean; reason?: string } {
  if (disabledByEnv()) return { available: false, reason: 'disabled by GSLBD_DNS_UDP_BATCH' };
  if (process.platform !== 'linux') return { available: false, reason: 'recvmmsg/sendmmsg need Linux' };
  const n = load();
  return n ? { available: true } : { available: false, reason: loadError };
}

/**
 * One bound UDP socket moving packets in batches. In `onBatch(count)`, slots 0…count-1 hold the
 * received packets: `rxLength(i)` (-1: oversized, skip), `request(i)`, `source(i)`, `sourcePort(i)`;
 * write a reply at `txOffset(i)` in `mem` and call `setReply(i, length)`. Replies are sent when
 * `onBatch` returns. `sendTo` sends one reply later (answers that waited for a database).
 */
export class BatchSocket {
  readonly port: number;
  readonly family: 4 | 6;
  /** the whole shared memory */
  readonly mem: Buffer;
  readonly batch: number;
  readonly txSlot: number;
  private readonly meta: Int32Array;
  private readonly addr: Uint8Array;
  /** per slot: µs the packet waited in the receive queue (-1 unknown); undefined on an older build */
  private readonly age: Int32Array | undefined;
  private readonly rxSlot: number;
  private readonly txOff: number;
  private readonly addrOff: number;
  private readonly h: NativeHandle;
  private readonly n: Native;
  private closed = false;
  /** IPv4 source text by address, so a returning client costs no string building */
  private readonly v4Names = new Map<number, string>();
  /** the last view `request` made of each slot: reused while the packet length is the same */
  private readonly views: (Buffer | undefined)[];

  private constructor(n: Native, h: NativeHandle) {
    this.n = n;
    this.h = h;
    this.port = h.port;
    this.family = h.family;
    this.mem = Buffer.from(h.mem);
    this.meta = new Int32Array(h.mem, n.META_OFF, n.BATCH * 4);
    this.addr = new Uint8Array(h.mem, n.ADDR_OFF, n.BATCH * 16);
    this.age = n.AGE_OFF === undefined ? undefined : new Int32Array(h.mem, n.AGE_OFF, n.BATCH);
    this.batch = n.BATCH;
    this.rxSlot = n.RX_SLOT;
    this.txSlot = n.TX_SLOT;
    this.txOff = n.TX_OFF;
    this.addrOff = n.ADDR_OFF;
    this.views = new Array<Buffer | undefined>(n.BATCH).fill(undefined);
  }

  /**
   * Binds `address:port` (port 0 picks one; see `port`) with the options above. Throws when the
   * addon is unavailable or bind fails.
   */
  static open(address: string, port: number, onBatch: (count: number) => void, opts: BatchSocketOptions = {}): BatchSocket {
    const n = load();
    if (!n) throw new Error(`udp batch addon unavailable: ${loadError ?? 'not loaded'}`);
    let self: BatchSocket | undefined;
    let h: NativeHandle;
    try {
      h = n.open(address, port, (count) => { if (self && !self.closed) onBatch(count); }, opts.reusePort ?? false, opts.coalesceUs ?? 0);
    } catch (err) {
      // The addon reports errno as "E<number>"; give it the name dgram would (EADDRINUSE…).
      const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
      const num = typeof e.code === 'string' && /^E\d+$/.test(e.code) ? Number(e.code.slice(1)) : NaN;
      const name = Object.entries(osConstants.errno).find(([, v]) => v === num)?.[0];
      if (name) { e.code = name; e.errno = -num; e.syscall = e.message.split(':')[0]; }
      e.address = address; e.port = port;
      throw e;
    }
    self = new BatchSocket(n, h);
    return self;
  }

  rxLength(i: number): number { return this.meta[i * 4]!; }
  /**
   * How long packet `i` waited in the socket's receive queue before this batch was read, in
   * microseconds (the kernel's receive timestamp, SO_TIMESTAMPNS); -1 when unknown.
   */
  queueAgeUs(i: number): number { return this.age ? this.age[i]! : -1; }
  /**
   * A view of packet `i` (valid until `onBatch` returns). A slot's view is kept and returned again
   * for the next packet of the same length there (it shows that packet's bytes), so a steady
   * stream of queries makes no view per packet.
   */
  request(i: number): Buffer {
    const len = this.meta[i * 4]!;
    const v = this.views[i];
    if (v !== undefined && v.length === len) return v;
    const at = i * this.rxSlot;
    return (this.views[i] = this.mem.subarray(at, at + len));
  }
  sourceFamily(i: number): number { return this.meta[i * 4 + 1]!; }
  sourcePort(i: number): number { return this.meta[i * 4 + 2]!; }
  txOffset(i: number): number { return this.txOff + i * this.txSlot; }
  setReply(i: number, length: number): void { this.meta[i * 4 + 3] = length; }
  /** A copy of the source address bytes of packet `i` (4 or 16), for `sendTo` after the batch. */
  sourceBytes(i: number): Uint8Array {
    const at = this.addrOff + i * 16;
    return Uint8Array.prototype.slice.call(this.mem, at, at + (this.meta[i * 4 + 1] === 4 ? 4 : 16));
  }

  /** The source address of packet `i` as dgram would print it ("192.0.2.1", "2001:db8::1", "::ffff:192.0.2.1"). */
  source(i: number): string {
    const a = this.addr;
    const o = i * 16;
    if (this.meta[i * 4 + 1] === 4) {
      const key = ((a[o]! << 24) | (a[o + 1]! << 16) | (a[o + 2]! << 8) | a[o + 3]!) >>> 0;
      let s = this.v4Names.get(key);
      if (s === undefined) {
        s = `${a[o]}.${a[o + 1]}.${a[o + 2]}.${a[o + 3]}`;
        if (this.v4Names.size >= 4096) this.v4Names.clear();
        this.v4Names.set(key, s);
      }
      return s;
    }
    return ipv6Text(a, o);
  }

  /** Sends one datagram to `addr` (bytes from `sourceBytes`); false when it could not be sent. */
  sendTo(data: Uint8Array, family: number, addr: Uint8Array, port: number): boolean {
    if (this.closed) return false;
    return this.n.sendTo(this.h, data, family, addr, port);
  }

  stats(): BatchStats { return this.n.stats(this.h); }

  /** Stops receiving and closes the socket (on the next loop turn). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.n.close(this.h);
  }
}

/**
 * IPv6 text as libuv's inet_ntop writes it (what dgram reports): the longest run of two or more
 * zero groups becomes "::", and IPv4-mapped/compatible addresses end in dotted quad.
 */
export function ipv6Text(a: Uint8Array, o = 0): string {
  const w: number[] = [];
  for (let k = 0; k < 8; k++) w.push((a[o + 2 * k]! << 8) | a[o + 2 * k + 1]!);
  let bestBase = -1; let bestLen = 0; let curBase = -1; let curLen = 0;
  for (let k = 0; k < 8; k++) {
    if (w[k] === 0) {
      if (curBase < 0) { curBase = k; curLen = 1; } else curLen++;
    } else if (curBase >= 0) {
      if (bestBase < 0 || curLen > bestLen) { bestBase = curBase; bestLen = curLen; }
      curBase = -1;
    }
  }
  if (curBase >= 0 && (bestBase < 0 || curLen > bestLen)) { bestBase = curBase; bestLen = curLen; }
  if (bestBase >= 0 && bestLen < 2) bestBase = -1;
  let s = '';
  for (let k = 0; k < 8; k++) {
    if (bestBase >= 0 && k >= bestBase && k < bestBase + bestLen) {
      if (k === bestBase) s += ':';
      continue;
    }
    if (k !== 0) s += ':';
    if (k === 6 && bestBase === 0 && (bestLen === 6 || (bestLen === 7 && w[7] !== 1) || (bestLen === 5 && w[5] === 0xffff))) {
      s += `${a[o + 12]}.${a[o + 13]}.${a[o + 14]}.${a[o + 15]}`;
      break;
    }
    s += w[k]!.toString(16);
  }
  if (bestBase >= 0 && bestBase + bestLen === 8) s += ':';
  return s;
}
