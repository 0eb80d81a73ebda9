/**
 * Pool id under which the file-defined endpoints (`loadbalancer.endpoints`, checked by the file's
 * `health.*` block) appear in the view: `isHealthy(STATIC_POOL_ID, ip)` (runtime/config/static-pool.ts).
 */
export { STATIC_POOL_ID } from '../config/static-pool.js';

/** Health of one endpoint (gslb-api.md §2 "Health status entry"). */
export interface HealthEntry {
  healthy: boolean;
  score: number;
  lastChecked: number;
  rttMs: number;
  node: string;
}

/**
 * Decides whether DNS treats an endpoint as healthy from the local entry (undefined when this node
 * has not probed it). The cluster part installs the policies of gslb-config-auth.md §2
 * (`prefer-local`, `local-only`, `global-any-healthy`, `global-quorum`).
 */
export type HealthPolicy = (poolId: string, ip: string, local: HealthEntry | undefined) => boolean;

/** Default policy: the local result; an endpoint never probed is healthy (optimistic start). */
export const localPolicy: HealthPolicy = (_p, _ip, local) => local === undefined || local.healthy;

/**
 * The probe round-trip time (ms) the `rum` step's fallback orders by (gslb-api.md §4), from the
 * local entry (undefined when this node has not probed the endpoint); -1 when there is none. The
 * cluster part installs the cluster-wide minimum (docs/cluster.md "Probe RTT"); the `latency` step
 * keeps this node's own RTT.
 */
export type RttPolicy = (poolId: string, ip: string, local: HealthEntry | undefined) => number;

/** Whether an RTT moved enough to matter to an answer: by at least max(2 ms, 10 %). */
export function rttMoved(from: number, to: number): boolean {
  return Math.abs(from - to) >= Math.max(2, from * 0.1);
}

/** Default: this node's own RTT, once it probed the endpoint. */
export const localRtt: RttPolicy = (_p, _ip, local) => (local !== undefined && local.lastChecked > 0 ? local.rttMs : -1);

/**
 * What changed in a view since the last {@link HealthView.takeChanges}: the endpoints (pool id,
 * address) whose verdict may differ, or `all` when a change may touch any endpoint (a policy
 * input such as cluster liveness, or a whole pool removed).
 */
export interface HealthChanges { all: boolean; endpoints: [poolId: string, ip: string][] }

/**
 * The in-memory health view that the DNS answer path reads: pool id → IP → entry. An endpoint with
 * no entry is healthy (optimistic start, §3). `version` increases on every change so readers can
 * cache derived data.
 */
export class HealthView {
  private readonly byPool = new Map<string, Map<string, HealthEntry>>();
  /** the key of every entry object, for `update` (which is handed the entry, not its key) */
  private readonly keyOf = new WeakMap<HealthEntry, [string, string]>();
  private v = 0;
  private objects = 0;
  /** changes are recorded once {@link trackChanges} was called */
  private tracking = false;
  private changedAll = false;
  private readonly changed = new Map<string, [string, string]>();
  policy: HealthPolicy = localPolicy;
  rtt: RttPolicy = localRtt;
  /** told after every change of `version`, in the order they subscribed ({@link subscribe}) */
  private listeners: readonly { listener: () => void }[] = [];

  /**
   * Increases on every change an answer may depend on. Setting it (the cluster part, when peers'
   * liveness changes) counts as a change of every endpoint; {@link touch} names one.
   */
  get version(): number { return this.v; }
  set version(n: number) {
    this.changedAll = true;
    this.v = n;
    this.tell();
  }

  /**
   * Calls `listener` after every change of `version` (the DNS part sends the changed verdicts to
   * its worker threads, coalesced per event-loop turn), until the function returned is called. Any
   * number may listen; a listener must not throw (a probe's write is on the caller's stack).
   */
  subscribe(listener: () => void): () => void {
    const own = { listener };
    this.listeners = [...this.listeners, own];
    return () => { this.listeners = this.listeners.filter((l) => l !== own); };
  }

  /** Tells every listener; the list is replaced, never changed in place, so one may unsubscribe meanwhile. */
  private tell(): void {
    const ls = this.listeners;
    for (let i = 0; i < ls.length; i++) ls[i]!.listener();
  }

  private bump(poolId: string, ip: string): void {
    if (this.tracking && !this.changedAll) this.changed.set(`${poolId}\u0000${ip}`, [poolId, ip]);
    this.v++;
    this.tell();
  }

  /** A change of one endpoint's verdict from outside its entry (a peer's report in a cluster). */
  touch(poolId: string, ip: string): void { this.bump(poolId, ip); }

  /** Starts recording changes for {@link takeChanges} (the first call reports `all`). */
  trackChanges(): void {
    this.tracking = true;
    this.changedAll = true;
  }

  /** The changes since the previous call (docs/dns.md "Workers": what the DNS worker threads are sent). */
  takeChanges(): HealthChanges {
    const out: HealthChanges = { all: this.changedAll, endpoints: this.changedAll ? [] : [...this.changed.values()] };
    this.changedAll = false;
    this.changed.clear();
    return out;
  }

  /**
   * Changes whenever an entry object is added, replaced or removed (not when one is updated in
   * place): a writer that keeps a reference to an entry may use it while this stays the same.
   */
  get entryObjects(): number { return this.objects; }

  get(poolId: string, ip: string): HealthEntry | undefined {
    return this.byPool.get(poolId)?.get(ip);
  }
  /** Whether DNS may answer with the endpoint, under the active policy. Hot path: two map lookups. */
  isHealthy(poolId: string, ip: string): boolean {
    return this.policy(poolId, ip, this.byPool.get(poolId)?.get(ip));
  }
  /** The RTT the `rum` fallback uses (`rtt`); -1 when there is none. `local`: the entry, when the caller has it. Hot path. */
  rttMs(poolId: string, ip: string, local: HealthEntry | undefined = this.byPool.get(poolId)?.get(ip)): number {
    return this.rtt(poolId, ip, local);
  }
  /** Score in [0,1]; 1 when unknown. */
  score(poolId: string, ip: string): number {
    return this.byPool.get(poolId)?.get(ip)?.score ?? 1;
  }
  set(poolId: string, ip: string, e: HealthEntry): void {
    let m = this.byPool.get(poolId);
    if (!m) this.byPool.set(poolId, (m = new Map()));
    m.set(ip, e);
    this.keyOf.set(e, [poolId, ip]);
    this.objects++;
    this.bump(poolId, ip);
  }
  /**
   * Records a probe's outcome into the endpoint's entry, in place (no allocation per probe; an
   * entry handed out by `get` changes with it, so readers copy what they keep). `rttMs` below 0
   * keeps the entry's RTT. Unlike `set`, `version` only moves when something an answer depends on
   * changed (healthy, score, or rttMs by at least max(2 ms, 10 %)), so steady probes at thousands
   * a second do not invalidate the DNS engine's cached candidate lists (runtime/dns/service-plan.ts).
   * Returns the entry.
   */
  record(poolId: string, ip: string, healthy: boolean, score: number, lastChecked: number, rttMs: number, node: string): HealthEntry {
    let m = this.byPool.get(poolId);
    if (!m) this.byPool.set(poolId, (m = new Map()));
    const e = m.get(ip);
    if (!e) {
      const created = { healthy, score, lastChecked, rttMs: Math.max(0, rttMs), node };
      m.set(ip, created);
      this.keyOf.set(created, [poolId, ip]);
      this.objects++;
      this.bump(poolId, ip);
      return created;
    }
    this.update(e, healthy, score, lastChecked, rttMs, node);
    return e;
  }

  /**
   * {@link record} on an entry the caller holds (taken from `get`, valid while
   * {@link entryObjects} is unchanged): no lookup at all.
   */
  update(e: HealthEntry, healthy: boolean, score: number, lastChecked: number, rttMs: number, node: string): void {
    const changed = e.healthy !== healthy || e.score !== score || (rttMs >= 0 && rttMoved(e.rttMs, rttMs));
    e.healthy = healthy;
    e.score = score;
    e.lastChecked = lastChecked;
    if (rttMs >= 0) e.rttMs = rttMs;
    e.node = node;
    if (!changed) return;
    const key = this.keyOf.get(e);
    if (key) this.bump(key[0], key[1]);
    else this.version++;
  }
  delete(poolId: string, ip?: string): void {
    this.objects++;
    if (ip === undefined) {
      this.byPool.delete(poolId);
      this.version++;
      return;
    }
    this.byPool.get(poolId)?.delete(ip);
    this.bump(poolId, ip);
  }
  /** Entries of one pool (IP → entry). */
  pool(poolId: string): ReadonlyMap<string, HealthEntry> {
    return this.byPool.get(poolId) ?? new Map();
  }
  pools(): IterableIterator<[string, Map<string, HealthEntry>]> {
    return this.byPool.entries();
  }
}
