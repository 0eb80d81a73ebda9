/**
 * Parses Go-style duration strings (`500ms`, `10s`, `1m30s`, `1h`, `2d`) into milliseconds.
 * Returns undefined for anything else, including negative values and bare numbers without a unit.
 */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

export function parseDuration(input: unknown): number | undefined {
  if (typeof input !== 'string' || input.length === 0) return undefined;
  if (input === '0') return 0;
  let total = 0;
  PART.lastIndex = 0;
  let pos = 0;
  while (pos < input.length) {
    PART.lastIndex = pos;
    const m = PART.exec(input);
    if (!m) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    pos = PART.lastIndex;
  }
  return Math.round(total);
}

/** Formats milliseconds as the shortest exact duration string (`90000` → `1m30s`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000], ['ms', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('');
}
