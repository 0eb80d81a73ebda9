import type { StepTrace } from '../../runtime/balancer/types.js';

/** How one query was answered, as far as a client can tell. */
export interface Answered {
  /** response code (NOERROR 0, SERVFAIL 2, NXDOMAIN 3, …) */
  rcode: number;
  /** the answered addresses in order */
  ips: readonly string[];
  /** false when the order came from a rotation or a random draw (round-robin, weighted, fallbacks) */
  ordered: boolean;
}

// Steps whose order depends on the query's sequence number or a random draw, and steps that put a
// client-determined address first again afterwards (runtime/balancer/select.ts reasons).
const ROTATING = /^(Rotation|WeightedRandom)|RoundRobin$/;
const DETERMINING = /^(ByDistance|ByProbeRtt|RuleMatched|LowestPriority|RumData|RumFallbackProbeRtt|RumFallbackOrder)/;

/**
 * Whether the order of a selection's answer is the same for every identical query: false when the
 * last step that set the order rotated or drew at random. Pure.
 */
export function isOrdered(steps: readonly StepTrace[]): boolean {
  let ordered = true;
  for (const s of steps) {
    if (ROTATING.test(s.reason)) ordered = false;
    else if (DETERMINING.test(s.reason)) ordered = true;
  }
  return ordered;
}

/**
 * Whether a client would see a different answer (docs/gitops.md "Traffic replay"): another response
 * code, another set of addresses, or, when both selections put a client-determined address first
 * (geo, map-file and ASN rules, failover, latency and RUM steps), another first address. Rotation
 * and random draws never count: round-robin over the same members is the same answer. Pure.
 */
export function answersDiffer(a: Answered, b: Answered): boolean {
  if (a.rcode !== b.rcode) return true;
  if (a.ips.length !== b.ips.length) return true;
  const set = new Set(a.ips);
  for (const ip of b.ips) if (!set.has(ip)) return true;
  return a.ordered && b.ordered && a.ips.length > 1 && a.ips[0] !== b.ips[0];
}
