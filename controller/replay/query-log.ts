import { isIP } from 'node:net';
import { parseCidr } from '../../runtime/net/ip.js';
import { QTYPES } from '../../runtime/dns/query-packet.js';

/** One recorded query worth replaying: what the client asked and from where. */
export interface LoggedQuery {
  name: string;
  /** A, AAAA, SOA, NS or ANY */
  type: string;
  /** the query's source address */
  src: string;
  /** the EDNS Client Subnet it carried (`81.2.69.0/24`), when it did */
  ecs?: string | undefined;
}

/** The queries of a query log, and how many lines were left out. */
export interface ParsedLog { queries: LoggedQuery[]; skipped: number }

/**
 * Reads gslbd's own query log (docs/dns.md "Query log"): JSON lines, one per answered query, with
 * `name`, `type`, `src` and optionally `ecs`; other lines of the same log (startup, probes) and
 * lines in the text format are counted as skipped, as are queries of types the DNS server answers
 * without a selection (AXFR, TYPE65…) and lines whose address or subnet does not parse. Pure.
 */
export function parseQueryLog(text: string): ParsedLog {
  const queries: LoggedQuery[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t) continue;
    let o: Record<string, unknown>;
    try {
      const v = JSON.parse(t) as unknown;
      if (!v || typeof v !== 'object' || Array.isArray(v)) { skipped++; continue; }
      o = v as Record<string, unknown>;
    } catch {
      skipped++;
      continue;
    }
    const { name, type, src, ecs } = o;
    if (typeof name !== 'string' || !name || typeof type !== 'string' || !(type in QTYPES) || typeof src !== 'string' || isIP(src.replace(/^::ffff:(?=\d+\.)/, '')) === 0) { skipped++; continue; }
    if (ecs !== undefined && (typeof ecs !== 'string' || !parseCidr(ecs))) { skipped++; continue; }
    queries.push({ name, type, src, ...(typeof ecs === 'string' ? { ecs } : {}) });
  }
  return { queries, skipped };
}
