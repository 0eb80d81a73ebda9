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

/** A compact duration from milliseconds: `45s`, `3m12s`, `2h05m`, `3d04h` (negative clock skew reads as `0s`). */
export function duration(ms: number): string {
  const sec = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(sec / 86400);
  const h = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (d > 0) return `${d}d${pad(h)}h`;
  if (h > 0) return `${h}h${pad(m)}m`;
  if (m > 0) return `${m}m${pad(sec % 60)}s`;
  return `${sec}s`;
}
