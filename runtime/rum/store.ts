import type { Candidate, RumSource } from '../balancer/types.js';
import { subnetKey } from './subnet.js';

/** Limits of the subnet store (gslb-api.md §8 "RUM subnet store"). */
export interface RumStoreLimits {
  /** subnets kept at most; the one updated longest ago goes first (default 50,000) */
  maxSubnets: number;
  /** a sample older than this is stale and ignored (default 30 minutes) */
  ttlMs: number;
  /** members remembered per subnet; the one measured longest ago goes first (default 64) */
  maxMembersPerSubnet: number;
}

export const RUM_STORE_DEFAULTS: RumStoreLimits = { maxSubnets: 50_000, ttlMs: 30 * 60_000, maxMembersPerSubnet: 64 };

/**
 * One subnet's measurements, as parallel arrays (a handful of members each): compact, and read
 * without allocation on the DNS answer path.
 */
interface SubnetEntry {
  /** last sample time of any member: the store's eviction order */
  updated: number;
  ips: string[];
  /** smoothed latency per member, ms */
  ms: number[];
  /** last sample time per member */
  at: number[];
  /** samples per member */
  n: number[];
}

/** Weight of a new sample in the smoothed latency (an exponentially weighted moving average). */
const ALPHA = 0.3;

/**
 * Real-user latencies by client subnet and member address (docs/rum.md "Subnet store"). A member's
 * latency from a subnet is the moving average of its samples (weight 0.3 for the newest), fresh for
 * `ttlMs` after its last sample. Memory is bounded: at `maxSubnets` the subnet updated longest ago
 * is dropped, and each subnet remembers at most `maxMembersPerSubnet` members. `sweep` drops
 * expired subnets (the part runs it every minute). The clock is injected.
 */
export class RumStore implements RumSource {
  private readonly subnets = new Map<string, SubnetEntry>();
  private samples = 0;
  private evicted = 0;

  /** told of every sample added (RumSource.onSample: the DNS part copies them to its workers) */
  onSample: ((key: string, ip: string, ms: number, at: number) => void) | undefined;

  constructor(private readonly limits: RumStoreLimits = RUM_STORE_DEFAULTS, private readonly now: () => number = Date.now) {}

  /** Records one sample of `ms` from subnet `key` to member `ip`, taken at `at`. */
  add(key: string, ip: string, ms: number, at = this.now()): void {
    this.onSample?.(key, ip, ms, at);
    let e = this.subnets.get(key);
    if (e) {
      // re-insert: Map order is the eviction order (least recently updated first)
      this.subnets.delete(key);
    } else {
      if (this.subnets.size >= this.limits.maxSubnets) this.evictOldest();
      e = { updated: at, ips: [], ms: [], at: [], n: [] };
    }
    this.subnets.set(key, e);
    e.updated = Math.max(e.updated, at);
    this.samples++;
    const i = e.ips.indexOf(ip);
    if (i < 0) {
      if (e.ips.length >= this.limits.maxMembersPerSubnet) dropStalest(e);
      e.ips.push(ip); e.ms.push(ms); e.at.push(at); e.n.push(1);
      return;
    }
    const fresh = at - e.at[i]! < this.limits.ttlMs;
    e.ms[i] = fresh ? e.ms[i]! + ALPHA * (ms - e.ms[i]!) : ms;
    e.at[i] = Math.max(e.at[i]!, at);
    e.n[i] = fresh ? e.n[i]! + 1 : 1;
  }

  /**
   * The candidate with the lowest fresh latency measured from `clientIp`'s subnet, among `cands`
   * (the rum step passes those with a rumUrl); undefined when none is covered. No allocation.
   */
  lowest(clientIp: string, cands: readonly Candidate[]): { ip: string; latencyMs: number } | undefined {
    if (this.subnets.size === 0) return undefined;
    const key = subnetKey(clientIp);
    const e = key === undefined ? undefined : this.subnets.get(key);
    if (!e) return undefined;
    const oldest = this.now() - this.limits.ttlMs;
    let best = -1;
    for (const c of cands) {
      const i = e.ips.indexOf(c.ip);
      if (i < 0 || e.at[i]! <= oldest) continue;
      if (best < 0 || e.ms[i]! < e.ms[best]!) best = i;
    }
    return best < 0 ? undefined : { ip: e.ips[best]!, latencyMs: Math.round(e.ms[best]! * 10) / 10 };
  }

  /** Drops subnets with no fresh sample; returns how many went. */
  sweep(): number {
    const oldest = this.now() - this.limits.ttlMs;
    let n = 0;
    for (const [key, e] of this.subnets) {
      // in eviction order: the first fresh entry ends the sweep only if later ones are newer, which
      // out-of-order peer samples can break, so every entry is looked at
      if (e.updated <= oldest) { this.subnets.delete(key); n++; }
    }
    return n;
  }

  /** Counts for /rum/status: subnets, samples since start, subnets evicted at the cap. */
  counts(): { subnets: number; samples: number; evicted: number } {
    return { subnets: this.subnets.size, samples: this.samples, evicted: this.evicted };
  }

  /**
   * What the store knows about the addresses `include` accepts (a tenant's own members): the
   * subnets with a fresh measurement of at least one of them, the samples those measurements hold,
   * and per address the same two counts.
   */
  coverage(include: (ip: string) => boolean): { subnets: number; samples: number; members: Map<string, { subnets: number; samples: number }> } {
    const oldest = this.now() - this.limits.ttlMs;
    const members = new Map<string, { subnets: number; samples: number }>();
    let subnets = 0;
    let samples = 0;
    for (const e of this.subnets.values()) {
      let covered = false;
      for (let i = 0; i < e.ips.length; i++) {
        const ip = e.ips[i]!;
        if (e.at[i]! <= oldest || !include(ip)) continue;
        covered = true;
        samples += e.n[i]!;
        const c = members.get(ip) ?? { subnets: 0, samples: 0 };
        c.subnets++; c.samples += e.n[i]!;
        members.set(ip, c);
      }
      if (covered) subnets++;
    }
    return { subnets, samples, members };
  }

  private evictOldest(): void {
    const first = this.subnets.keys().next();
    if (first.done) return;
    this.subnets.delete(first.value);
    this.evicted++;
  }
}

/** Removes the member measured longest ago from a full subnet entry. */
function dropStalest(e: SubnetEntry): void {
  let j = 0;
  for (let i = 1; i < e.at.length; i++) if (e.at[i]! < e.at[j]!) j = i;
  e.ips.splice(j, 1); e.ms.splice(j, 1); e.at.splice(j, 1); e.n.splice(j, 1);
}
