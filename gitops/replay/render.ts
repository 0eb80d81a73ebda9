import type { ReplayGroup, ReplayReport } from './replay.js';

/** `12 of 40 (30.00 %)` */
const share = (n: number, of: number, pct: number) => `${n} of ${of} (${pct.toFixed(2)} %)`;

function groupLines(title: string, groups: readonly ReplayGroup[], note: string | undefined, limit = 15): string[] {
  const lines = [`By ${title}:${note ? ` (${note})` : ''}`];
  const width = Math.max(0, ...groups.slice(0, limit).map((g) => g.key.length));
  for (const g of groups.slice(0, limit)) lines.push(`  ${g.key.padEnd(width)}  ${share(g.changed, g.queries, g.percent)} changed`);
  if (groups.length > limit) lines.push(`  … ${groups.length - limit} more`);
  return lines;
}

/** The human form of a replay report (gslbctl diff --replay). */
export function renderReplay(r: ReplayReport): string {
  const lines = [
    `Traffic replay: ${share(r.changed, r.queries, r.percent)} answers change${r.skipped ? ` (${r.skipped} log line${r.skipped === 1 ? '' : 's'} skipped)` : ''}`,
    ...groupLines('country', r.byCountry, r.geo.country ? undefined : 'no City database configured: unknown'),
    ...groupLines('AS', r.byAsn, r.geo.asn ? undefined : 'no ASN database configured: unknown'),
    ...groupLines('service', r.byService, undefined),
  ];
  if (r.examples.length) {
    lines.push('Changed answers (most frequent first):');
    for (const e of r.examples) lines.push(`  ${e.count}× ${e.name} ${e.type} from ${e.client}: ${e.before} -> ${e.after}`);
  }
  return lines.join('\n');
}
