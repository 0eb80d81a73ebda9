import { createRequire } from 'node:module';
import { join } from 'node:path';
import { constants as osConstants } from 'node:os';
import { PACKAGE_ROOT } from '../../paths.js';
import type { Checker, CheckResult, CheckTarget, ProbeFinish } from '../types.js';
import { tcpChecker } from './tcp.js';

/**
 * The TCP check through the native addon (native/tcp-probe): probes start in batches from a
 * shared queue and finish in batches through a shared buffer. Two modes over one addon:
 * `connect` (a non-blocking connect() per probe, reset at once) and `syn` (half-open: a bare SYN
 * from a raw socket, IPv4 only, needs CAP_NET_RAW; IPv6 members still use connect()). Same details
 * as the `net.connect` checker (checkers/tcp.ts): `connected`, `connect ECONNREFUSED`, `timeout`.
 * See docs/health.md "TCP probe path".
 */

/** The addon's exports (native/tcp-probe/tcp_probe.c). */
export interface TcpProbeAddon {
  /** registers the batch callback; returns the results buffer: count x [id, errno, rtt µs] */
  setup(onBatch: (count: number) => void): ArrayBuffer;
  /** the start queue: QUEUE_MAX entries of QUEUE_WORDS int32 (tcp_probe.c "Start queue entry") */
  queue(): ArrayBuffer;
  /** starts the first n queued entries; the number that could not (their errno in word 7) */
  startBatch(n: number): number;
  /** 4 or 6 with the address bytes written to `out` (4 words), or -EINVAL */
  address(ip: string, out: Int32Array): number;
  /** true when the probe was in flight */
  cancel(id: number): boolean;
  inflight(): number;
  /** idle sockets kept for reuse (both address families) */
  pooled(): number;
  /** opens the SYN path: 0, or -errno (EPERM without CAP_NET_RAW) */
  synEnable(): number;
  /**
   * [first source port, replies dropped, SYNs sent through connect() instead, number of source
   * ports, replies that matched no probe in flight, RSTs sent for SYN-ACKs, RSTs the raw socket did
   * not take, chunks of SYNs that waited for room in the send buffer]
   */
  synStats(): number[];
}

/** Environment variable that forces the `net.connect` path (`net`), for tests and as an escape. */
export const TCP_PROBE_ENV = 'GSLBD_TCP_PROBE';

const ADDON_PATH = join(PACKAGE_ROOT, 'native', 'tcp-probe', 'build', 'Release', 'tcp_probe.node');

let loaded: { addon: TcpProbeAddon } | { error: Error } | undefined;

/** Loads the addon once per process; the error when it cannot be loaded. */
export function loadTcpProbeAddon(): TcpProbeAddon | Error {
  if (!loaded) {
    try {
      loaded = { addon: createRequire(import.meta.url)(ADDON_PATH) as TcpProbeAddon };
    } catch (err) {
      loaded = { error: err instanceof Error ? err : new Error(String(err)) };
    }
  }
  return 'addon' in loaded ? loaded.addon : loaded.error;
}

const errnoNames = new Map<number, string>();
for (const [name, n] of Object.entries(osConstants.errno)) if (!errnoNames.has(n)) errnoNames.set(n, name);
/** `ECONNREFUSED` for 111, as Node names errors. */
export function errnoName(n: number): string {
  return errnoNames.get(n) ?? `errno ${n}`;
}

const details: string[] = [];
/** `connect ECONNREFUSED` for 111, built once per errno. */
function failDetail(err: number): string {
  return (details[err] ??= `connect ${errnoName(err)}`);
}

const CONNECTED = 'connected';
const EINVAL = osConstants.errno.EINVAL;
/** Handles at and above this are probes delegated to `net.connect` (addon ids stay below 2^24). */
const NET_HANDLE_BASE = 2 ** 30;
/** Start queue geometry (tcp_probe.c QMAX, QW) and the SYN flag of an entry's second word. */
const QUEUE_MAX = 4096;
const QUEUE_WORDS = 8;
const SYN_FLAG = 1 << 20;
/**
 * A target's address in queue form (a plain object: a typed array per target would cost several
 * times the memory at 100,000 targets).
 */
interface QueuedAddress {
  /** 4 or 6; 0 for a scoped address (net.connect); -errno when it cannot be probed */
  fam: number;
  /** port | family << 16 */
  meta: number;
  /** the address bytes as the addon wrote them */
  w0: number; w1: number; w2: number; w3: number;
}

/**
 * The process's one prober over the addon: probe ids index plain arrays (context and finish per
 * id) and are reused through a free list; starts are written to the addon's queue and started
 * together in a microtask (one native call for all probes due in a scheduler slot); each target's
 * parsed address is kept in a WeakMap. A probe in the steady state allocates nothing.
 */
export class TcpProber {
  private readonly results: Int32Array;
  private readonly queue: Int32Array;
  private qn = 0;
  private flushQueued = false;
  private readonly ctxs: unknown[] = [];
  private readonly finishes: (ProbeFinish | undefined)[] = [];
  /** queue position of each id while it waits for the batch */
  private readonly qpos: number[] = [];
  private readonly free: number[] = [];
  private nextId = 0;
  private readonly addrs = new WeakMap<CheckTarget, QueuedAddress>();
  private readonly words = new Int32Array(4);
  private readonly failed: number[] = [];
  /** whether the SYN path is open, or why not */
  private syn: true | Error | undefined;

  constructor(private readonly addon: TcpProbeAddon) {
    this.results = new Int32Array(addon.setup(this.onBatch));
    this.queue = new Int32Array(addon.queue());
  }

  /** Opens the SYN path once; the error (EPERM without CAP_NET_RAW) when it cannot. */
  enableSyn(): true | Error {
    if (this.syn === undefined) {
      const rc = this.addon.synEnable();
      this.syn = rc === 0 ? true : new Error(`half-open SYN probes unavailable: ${errnoName(-rc)}${-rc === osConstants.errno.EPERM ? ' (needs CAP_NET_RAW)' : ''}`);
    }
    return this.syn;
  }

  get inflight(): number {
    return this.addon.inflight();
  }

  get pooled(): number {
    return this.addon.pooled();
  }

  /** See {@link TcpProbeAddon.synStats}; zeros without the SYN path. */
  synStats(): number[] {
    return this.addon.synStats();
  }

  private addressOf(target: CheckTarget): QueuedAddress {
    let a = this.addrs.get(target);
    if (a) return a;
    const w = this.words;
    w.fill(0);
    let fam = 0;
    if (!target.ip.includes('%')) {
      fam = this.addon.address(target.ip, w);
      const port = target.port;
      if (!(Number.isInteger(port) && port > 0 && port < 65536)) fam = -EINVAL;
    }
    a = { fam, meta: fam > 0 ? target.port | (fam << 16) : 0, w0: w[0]!, w1: w[1]!, w2: w[2]!, w3: w[3]! };
    this.addrs.set(target, a);
    return a;
  }

  /** Queues a probe; see {@link Checker.start}. `syn` asks for the SYN path (IPv4, when open). */
  start(target: CheckTarget, syn: boolean, ctx: unknown, finish: ProbeFinish): number {
    const a = this.addressOf(target);
    const fam = a.fam;
    if (fam === 0) return this.startNet(target, ctx, finish);
    if (fam < 0) {
      finish(ctx, false, 0, failDetail(-fam));
      return -1;
    }
    if (this.qn === QUEUE_MAX) this.flush();
    const id = this.free.length > 0 ? this.free.pop()! : this.nextId++;
    const q = this.queue;
    const o = this.qn * QUEUE_WORDS;
    q[o] = id;
    q[o + 1] = syn && this.syn === true ? a.meta | SYN_FLAG : a.meta;
    q[o + 2] = a.w0;
    q[o + 3] = a.w1;
    q[o + 4] = a.w2;
    q[o + 5] = a.w3;
    this.qpos[id] = this.qn++;
    this.ctxs[id] = ctx;
    this.finishes[id] = finish;
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flush);
    }
    return id;
  }

  /** Starts every queued probe in one call; reports the ones that could not start. */
  readonly flush = (): void => {
    this.flushQueued = false;
    const n = this.qn;
    if (n === 0) return;
    const fails = this.addon.startBatch(n);
    this.qn = 0;
    if (fails === 0) return;
    const q = this.queue;
    const failed = this.failed;
    for (let k = 0; k < n; k++) {
      const err = q[k * QUEUE_WORDS + 7]!;
      if (err !== 0) failed.push(q[k * QUEUE_WORDS]!, err);
    }
    // reported after the queue is free again: a finish may start new probes
    for (let i = 0; i < failed.length; i += 2) {
      const id = failed[i]!;
      const ctx = this.ctxs[id];
      const finish = this.finishes[id];
      this.release(id);
      finish?.(ctx, false, 0, failDetail(failed[i + 1]!));
    }
    failed.length = 0;
  };

  cancel(handle: number): void {
    if (handle >= NET_HANDLE_BASE) {
      this.netProbes.get(handle)?.abort();
      this.netProbes.delete(handle);
      return;
    }
    if (handle < 0 || this.finishes[handle] === undefined) return;
    const k = this.qpos[handle]!;
    if (k < this.qn && this.queue[k * QUEUE_WORDS] === handle) this.queue[k * QUEUE_WORDS] = -1; // not started yet
    else if (!this.addon.cancel(handle)) return;
    this.release(handle);
  }

  /** Scoped IPv6 addresses (`fe80::1%eth0`) go through `net.connect`, which resolves the scope. */
  private readonly netProbes = new Map<number, AbortController>();
  private netSeq = NET_HANDLE_BASE;
  private startNet(target: CheckTarget, ctx: unknown, finish: ProbeFinish): number {
    const handle = this.netSeq++;
    const ac = new AbortController();
    this.netProbes.set(handle, ac);
    void tcpChecker.check(target, ac.signal).then((r) => {
      if (this.netProbes.delete(handle)) finish(ctx, r.ok, r.rttMs, r.detail); // else cancelled: no report
    });
    return handle;
  }

  private release(id: number): void {
    this.ctxs[id] = undefined;
    this.finishes[id] = undefined;
    this.free.push(id);
  }

  private readonly onBatch = (count: number): void => {
    const res = this.results;
    for (let i = 0; i < count; i++) {
      const id = res[i * 3]!;
      const err = res[i * 3 + 1]!;
      const ctx = this.ctxs[id];
      const finish = this.finishes[id];
      this.release(id);
      if (!finish) continue;
      if (err === 0) finish(ctx, true, Math.round(res[i * 3 + 2]! / 10) / 100, CONNECTED);
      else finish(ctx, false, 0, failDetail(err));
    }
  };
}

/** A TCP checker over the process's {@link TcpProber}: `syn` true for half-open probes. */
export class NativeTcpChecker implements Checker {
  constructor(readonly prober: TcpProber, readonly syn: boolean) {}

  /** Probes in flight in the addon (both modes). */
  get inflight(): number {
    return this.prober.inflight;
  }

  /** Idle sockets the addon keeps for reuse. */
  get pooled(): number {
    return this.prober.pooled;
  }

  start(target: CheckTarget, ctx: unknown, finish: ProbeFinish): number {
    return this.prober.start(target, this.syn, ctx, finish);
  }

  cancel(handle: number): void {
    this.prober.cancel(handle);
  }

  check(target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve({ ok: false, rttMs: 0, detail: 'timeout' });
      const onAbort = () => {
        this.cancel(handle);
        resolve({ ok: false, rttMs: 0, detail: 'timeout' });
      };
      const handle = this.start(target, undefined, (_ctx, ok: boolean, rttMs: number, detail: string) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ ok, rttMs, detail });
      });
      if (handle >= 0) signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * The process's prober, or the error that keeps it from being used (addon missing or failing to
 * load, or `GSLBD_TCP_PROBE=net`). One per process: the addon holds one epoll set, one raw socket
 * and one batch callback.
 */
let shared: TcpProber | Error | undefined;
function tcpProber(): TcpProber | Error {
  if (process.env[TCP_PROBE_ENV] === 'net') return new Error(`${TCP_PROBE_ENV}=net`);
  if (!shared) {
    const addon = loadTcpProbeAddon();
    try {
      shared = addon instanceof Error ? addon : new TcpProber(addon);
    } catch (err) {
      shared = err instanceof Error ? err : new Error(String(err));
    }
  }
  return shared;
}

let connectChecker: NativeTcpChecker | undefined;
let synChecker: NativeTcpChecker | undefined;

/** The native TCP checker in `connect` mode, or why it cannot be used. */
export function nativeTcpChecker(): NativeTcpChecker | Error {
  const p = tcpProber();
  if (p instanceof Error) return p;
  return (connectChecker ??= new NativeTcpChecker(p, false));
}

/**
 * The native TCP checker in `syn` mode (half-open probes for IPv4 members), or why it cannot be
 * used: no addon, or the raw socket cannot be opened (EPERM without CAP_NET_RAW).
 */
export function nativeSynChecker(): NativeTcpChecker | Error {
  const p = tcpProber();
  if (p instanceof Error) return p;
  const syn = p.enableSyn();
  if (syn instanceof Error) return syn;
  return (synChecker ??= new NativeTcpChecker(p, true));
}
