/** Terminal helpers for gslbctl: colour only on a TTY, progress on stderr, compact times. */
export const isTty = (): boolean => Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;

/** Colours the +/- lines of a unified diff (headers bold). */
export function colorDiff(text: string): string {
  return text.split('\n').map((l) => {
    if (l.startsWith('+++') || l.startsWith('---') || l.startsWith('@@')) return `\x1b[1m${l}\x1b[0m`;
    if (l.startsWith('+')) return `\x1b[32m${l}\x1b[0m`;
    if (l.startsWith('-')) return `\x1b[31m${l}\x1b[0m`;
    if (l.startsWith('Held back')) return `\x1b[33m${l}\x1b[0m`;
    return l;
  }).join('\n');
}

/** Progress for long operations: a line on stderr when it is a terminal and output is human. */
export function progress(flags: Record<string, string | boolean>, msg: string): void {
  if (flags.o !== 'json' && process.stderr.isTTY) process.stderr.write(`… ${msg}\n`);
}

/** `2026-11-21 05:00:00Z` from epoch ms, or `-`. */
export function when(ms: number | null | undefined): string {
  if (!ms) return '-';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** Left-aligned columns. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}
