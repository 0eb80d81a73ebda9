import { isIP } from 'node:net';
import { parseCidr } from '../../runtime/net/ip.js';
import { QTYPES } from '../../runtime/dns/port.js';
import { runAtOnce } from '../../core/apply/slicer.js';

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
  return runAtOnce(parseQueryLogSteps(text));
}

/** Lines read between two yields of parseQueryLogSteps. */
const LINES_PER_STEP = 2000;

/**
 * {@link parseQueryLog} as steps (a pause every 2,000 lines), so the daemon reads a large sample
 * in slices (runSliced). Lines are taken one at a time from the text, never split into one array.
 */
export function* parseQueryLogSteps(text: string): Generator<void, ParsedLog, void> {
  const queries: LoggedQuery[] = [];
  let skipped = 0;
  let n = 0;
  for (let at = 0; at < text.length;) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    const t = text.slice(at, end).trim();
    at = end + 1;
    if (++n % LINES_PER_STEP === 0) yield;
    if (!t) continue;
    const q = loggedQuery(t);
    if (q) queries.push(q);
    else skipped++;
  }
  return { queries, skipped };
}

/** The query one log line records, or undefined when the line is not one to replay. */
function loggedQuery(line: string): LoggedQuery | undefined {
  let o: Record<string, unknown>;
  try {
    const v = JSON.parse(line) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    o = v as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { name, type, src, ecs } = o;
  if (typeof name !== 'string' || !name || typeof type !== 'string' || !(type in QTYPES) || typeof src !== 'string' || isIP(src.replace(/^::ffff:(?=\d+\.)/, '')) === 0) return undefined;
  if (ecs !== undefined && (typeof ecs !== 'string' || !parseCidr(ecs))) return undefined;
  return { name, type, src, ...(typeof ecs === 'string' ? { ecs } : {}) };
}
