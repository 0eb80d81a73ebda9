import { isIP } from 'node:net';
import type { RoutingExpect } from './kind.js';

/** What a routing test query got: the response code name and the addresses answered, in order. */
export interface Observed { rcode: string; answers: string[] }

/** An address in one spelling (IPv6 compressed, lower case), so `2001:DB8:0::1` equals `2001:db8::1`. */
export function canonicalIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  try { return new URL(`http://[${ip}]/`).hostname.slice(1, -1); } catch { return ip.toLowerCase(); }
}

const list = (ips: readonly string[]) => `[${ips.join(', ')}]`;

/** The expectation as one line: `NOERROR, answers [a, b] (any order), first answer one of [c]`. */
export function describeExpect(e: RoutingExpect): string {
  const parts: string[] = [];
  if (e.rcode) parts.push(e.rcode);
  if (e.answers) parts.push(`answers ${list(e.answers)}${e.answers.length > 1 ? (e.ordered ? ' (in this order)' : ' (any order)') : ''}`);
  if (e.oneOf) parts.push(`first answer one of ${list(e.oneOf)}`);
  return parts.join(', ');
}

/** What was got, as one line: `NOERROR [a, b]`. */
export const describeObserved = (o: Observed) => `${o.rcode} ${list(o.answers)}`;

/**
 * Judges one case (docs/gitops.md "Routing tests"): `rcode` must equal; `answers` must hold exactly
 * these addresses (as a multiset, or in order with `ordered`); `oneOf` must contain the first
 * answer (so there must be one). Every given expectation must hold. Pure.
 */
export function judgeCase(expect: RoutingExpect, got: Observed): boolean {
  const answers = got.answers.map(canonicalIp);
  if (expect.rcode && expect.rcode !== got.rcode) return false;
  if (expect.answers) {
    const want = expect.answers.map(canonicalIp);
    if (want.length !== answers.length) return false;
    if (expect.ordered) { if (want.some((ip, i) => ip !== answers[i])) return false; }
    else if ([...want].sort().join() !== [...answers].sort().join()) return false;
  }
  if (expect.oneOf && (answers.length === 0 || !expect.oneOf.map(canonicalIp).includes(answers[0]!))) return false;
  return true;
}
