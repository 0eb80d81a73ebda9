import { createRequire } from 'node:module';
import { join } from 'node:path';
import { constants as osConstants } from 'node:os';
import { PACKAGE_ROOT } from '../../paths.js';
import type { Checker, CheckResult, CheckTarget, ProbeFinish } from '../types.js';
import { tcpChecker } from './tcp.js';

/**
 * The TCP check through the native addon (native/tcp-probe): one non-blocking socket per probe on
 * an epoll set owned by the addon, results delivered in batches, RST on close. Same semantics and
 * details as the `net.connect` checker (checkers/tcp.ts): `connected`, `connect ECONNREFUSED`,
 * `timeout`. See docs/health.md "TCP probe path".
 */

/** The addon's exports (native/tcp-probe/tcp_probe.c). */
export interface TcpProbeAddon {
  /** registers the batch callback; returns the results buffer: count x [id, errno, rtt µs] */
  setup(onBatch: (count: number) => void): ArrayBuffer;
  /** 0 when started, or a negative errno */
  start(ip: string, port: number, id: number): number;
  /** true when the probe was in flight */
  cancel(id: number): boolean;
  inflight(): number;
  /** idle sockets kept for reuse (both address families) */
  pooled(): number;
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

const CONNECTED = 'connected';
/** Handles at and above this are probes delegated to `net.connect` (addon ids stay below 2^24). */
const NET_HANDLE_BASE = 2 ** 30;

/**
 * A checker over the addon. Probe ids index plain arrays (context and finish per id) and are
 * reused through a free list, so a probe allocates only its result object.
 */
export class NativeTcpChecker implements Checker {
  private readonly results: Int32Array;
  private readonly ctxs: unknown[] = [];
  private readonly finishes: (ProbeFinish | undefined)[] = [];
  private readonly free: number[] = [];
  private nextId = 0;

  constructor(private readonly addon: TcpProbeAddon) {
    this.results = new Int32Array(addon.setup(this.onBatch));
  }

  /** Probes in flight in the addon. */
  get inflight(): number {
    return this.addon.inflight();
  }

  /** Idle sockets the addon keeps for reuse. */
  get pooled(): number {
    return this.addon.pooled();
  }

  start(target: CheckTarget, ctx: unknown, finish: ProbeFinish): number {
    if (target.ip.includes('%')) return this.startNet(target, ctx, finish);
    const id = this.free.length > 0 ? this.free.pop()! : this.nextId++;
    const rc = this.addon.start(target.ip, target.port, id);
    if (rc !== 0) {
      this.free.push(id);
      finish(ctx, { ok: false, rttMs: 0, detail: `connect ${errnoName(-rc)}` });
      return -1;
    }
    this.ctxs[id] = ctx;
    this.finishes[id] = finish;
    return id;
  }

  cancel(handle: number): void {
    if (handle >= NET_HANDLE_BASE) {
      this.netProbes.get(handle)?.abort();
      this.netProbes.delete(handle);
      return;
    }
    if (handle < 0 || !this.addon.cancel(handle)) return;
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
      if (this.netProbes.delete(handle)) finish(ctx, r); // else cancelled: no report
    });
    return handle;
  }

  check(target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve({ ok: false, rttMs: 0, detail: 'timeout' });
      const onAbort = () => {
        this.cancel(handle);
        resolve({ ok: false, rttMs: 0, detail: 'timeout' });
      };
      const handle = this.start(target, undefined, (_ctx, r: CheckResult) => {
        signal.removeEventListener('abort', onAbort);
        resolve(r);
      });
      if (handle >= 0) signal.addEventListener('abort', onAbort, { once: true });
    });
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
      finish(ctx, err === 0
        ? { ok: true, rttMs: Math.round(res[i * 3 + 2]! / 10) / 100, detail: CONNECTED }
        : { ok: false, rttMs: 0, detail: `connect ${errnoName(err)}` });
    }
  };
}

/**
 * The native TCP checker, or the error that keeps it from being used (addon missing or failing to
 * load, or `GSLBD_TCP_PROBE=net`). One instance per process: the addon holds one epoll set and one
 * batch callback.
 */
let shared: NativeTcpChecker | Error | undefined;
export function nativeTcpChecker(): NativeTcpChecker | Error {
  if (process.env[TCP_PROBE_ENV] === 'net') return new Error(`${TCP_PROBE_ENV}=net`);
  if (!shared) {
    const addon = loadTcpProbeAddon();
    try {
      shared = addon instanceof Error ? addon : new NativeTcpChecker(addon);
    } catch (err) {
      shared = err instanceof Error ? err : new Error(String(err));
    }
  }
  return shared;
}
