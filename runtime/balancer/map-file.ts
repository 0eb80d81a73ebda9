import { cidrContains, parseCidr, parseIp, type Cidr } from '../net/ip.js';
import type { Candidate, StepResult } from './types.js';

/** A map-file rule ready for matching. */
export interface MapRule { cidr: Cidr; endpoint: string }

/**
 * Orders rules for matching: most specific prefix first; rules with the same prefix length keep
 * their file (or storage) order. This is the longest-prefix-first reading of the spec; with
 * non-overlapping rules it equals "first match wins". Invalid CIDRs are skipped. Pure.
 */
export function prepareMapRules(rules: readonly { cidr: string; endpoint: string }[]): MapRule[] {
  const out: { r: MapRule; i: number }[] = [];
  rules.forEach((r, i) => {
    const cidr = parseCidr(r.cidr);
    if (cidr) out.push({ r: { cidr, endpoint: r.endpoint }, i });
  });
  out.sort((a, b) => b.r.cidr.bits - a.r.cidr.bits || a.i - b.i);
  return out.map((x) => x.r);
}

/** The first rule (in prepared order) whose CIDR holds the client, or undefined. */
export function matchMapRule(rules: readonly MapRule[], client: string): MapRule | undefined {
  const ip = parseIp(client);
  if (!ip) return undefined;
  for (const r of rules) if (cidrContains(r.cidr, ip)) return r;
  return undefined;
}

/**
 * Map-file: the matched rule's endpoint first, then every other candidate in registered order.
 * No match, or a matched endpoint that is not among the (healthy) candidates: all candidates in
 * registered order. Input is in registered order. `detail` adds the rule to the reason.
 */
export function mapFile(cands: readonly Candidate[], rules: readonly MapRule[], client: string, detail = true): StepResult & { matched: boolean } {
  const rule = matchMapRule(rules, client);
  if (!rule) return { out: cands, reason: 'NoRuleMatched', matched: false };
  const hit = cands.find((c) => c.ip === rule.endpoint);
  const why = detail ? ` ${rule.cidr.text} -> ${rule.endpoint}` : '';
  if (!hit) return { out: cands, reason: `RuleEndpointUnavailable${why}`, matched: true };
  return { out: [hit, ...cands.filter((c) => c !== hit)], reason: `RuleMatched${why}`, matched: true };
}
