/**
 * Parses Go-style duration strings (`500ms`, `10s`, `1m30s`, `1h`, `2d`) into milliseconds.
 * Returns undefined for anything else, including negative values and bare numbers without a unit.
 */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

export function parseDuration(input: unknown): number | undefined {
  const ms = sumParts(input, PART, UNIT_MS);
  return ms === undefined ? undefined : Math.round(ms);
}

const UNIT_US: Record<string, number> = { us: 1, 'µs': 1, ms: 1000, s: 1_000_000 };
const PART_US = /(\d+(?:\.\d+)?)(us|µs|ms|s)/y;

/**
 * Parses a short duration with microseconds (`250us`, `250µs`, `1ms`, `1ms500us`, `0s`, `0`) into whole
 * microseconds, for settings below a millisecond (dns.udpCoalesce). Undefined for anything else.
 */
export function parseMicros(input: unknown): number | undefined {
  const us = sumParts(input, PART_US, UNIT_US);
  return us === undefined ? undefined : Math.round(us);
}

/** The sum of `input`'s number+unit parts in the table's unit; "0" is 0; undefined unless every character is a part. */
function sumParts(input: unknown, part: RegExp, units: Record<string, number>): number | undefined {
  if (typeof input !== 'string' || input.length === 0) return undefined;
  if (input === '0') return 0;
  let total = 0;
  let pos = 0;
  while (pos < input.length) {
    part.lastIndex = pos;
    const m = part.exec(input);
    if (!m) return undefined;
    total += Number(m[1]) * units[m[2]!]!;
    pos = part.lastIndex;
  }
  return total;
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
