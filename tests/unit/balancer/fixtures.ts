import type { Candidate, SelectContext } from '../../../runtime/balancer/types.js';
import { NO_RUM } from '../../../runtime/balancer/types.js';

/** A candidate with defaults: weight 1, priority 0, score 1, unknown RTT and location. */
export function cand(ip: string, over: Partial<Candidate> & { order?: number } = {}): Candidate {
  return { ip, family: ip.includes(':') ? 6 : 4, order: 0, weight: 1, priority: 0, rumUrl: null, score: 1, rttMs: -1, lat: NaN, lon: NaN, rdata: Buffer.alloc(4), ...over };
}

/** Candidates in storage order from IPs. */
export function cands(...ips: string[]): Candidate[] {
  return ips.map((ip, order) => cand(ip, { order }));
}

/** A random source that replays `values` in a loop. */
export function seqRng(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length]!;
}

/** A selection context with no databases and no RUM. */
export function ctx(over: Partial<SelectContext> = {}): SelectContext {
  return { client: '192.0.2.1', seq: 0, rand: () => 0, locate: () => undefined, asnOf: () => undefined, rum: NO_RUM, ...over };
}

export const ips = (l: readonly Candidate[]) => l.map((c) => c.ip);
