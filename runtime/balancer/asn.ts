import type { AsnInfo, Candidate } from './types.js';

/** An asn rule ready for matching: `org` lower-cased once. */
export interface PreparedAsnRule { asn: number | undefined; org: string | undefined; endpoint: string }

/** Lower-cases org names once, at snapshot-swap time. Rules with neither asn nor org are dropped. */
export function prepareAsnRules(rules: readonly { asn?: number | undefined; org?: string | undefined; endpoint: string }[]): PreparedAsnRule[] {
  return rules
    .filter((r) => r.asn !== undefined || (r.org !== undefined && r.org !== ''))
    .map((r) => ({ asn: r.asn, org: r.org ? r.org.toLowerCase() : undefined, endpoint: r.endpoint }));
}

/**
 * The first rule that matches the client's AS: a rule matches when its `asn` equals the AS number
 * (checked first) or its `org` is a case-insensitive substring of the AS organisation name.
 */
export function matchAsnRule(rules: readonly PreparedAsnRule[], info: AsnInfo): { rule: PreparedAsnRule; by: 'asn' | 'org' } | undefined {
  const org = info.org.toLowerCase();
  for (const rule of rules) {
    if (rule.asn !== undefined && rule.asn === info.asn) return { rule, by: 'asn' };
    if (rule.org !== undefined && org.includes(rule.org)) return { rule, by: 'org' };
  }
  return undefined;
}

/** The matched endpoint first, then the other candidates in registered order; undefined when the endpoint is not a candidate. */
export function endpointFirst(cands: readonly Candidate[], endpoint: string): Candidate[] | undefined {
  const hit = cands.find((c) => c.ip === endpoint);
  return hit ? [hit, ...cands.filter((c) => c !== hit)] : undefined;
}
