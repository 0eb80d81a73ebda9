/**
 * The project's ajv formats (./ajv.ts) as standard JSON-Schema keywords, for tools that do not know
 * them: a generic OpenAPI client or validator ignores `format: ip`, so without these it would send
 * `""` as an address and get 400. Each entry is as strict as its format (the unit test checks every
 * pattern against the format's own validator); the OpenAPI document puts it beside the format
 * (runtime/api/openapi-document.ts). Patterns are ECMA-262 and compile with and without the `u` flag.
 */
export interface FormatHint {
  pattern: string;
  /** the shortest valid value, where the pattern alone does not say it plainly */
  minLength?: number;
}

const hex4 = (c: number) => `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * The code points `printable` refuses (\p{Cc}, \p{Cf}, \p{Cs}, \p{Zl}, \p{Zp} in Node's Unicode
 * tables), as inclusive ranges. Written out because deriving them takes a scan of every code point;
 * the unit test scans them and fails when Node's tables move.
 */
export const UNPRINTABLE_RANGES: readonly (readonly [number, number])[] = [
  [0x0, 0x1f], [0x7f, 0x9f], [0xad, 0xad], [0x600, 0x605], [0x61c, 0x61c], [0x6dd, 0x6dd], [0x70f, 0x70f],
  [0x890, 0x891], [0x8e2, 0x8e2], [0x180e, 0x180e], [0x200b, 0x200f], [0x2028, 0x202e], [0x2060, 0x2064],
  [0x2066, 0x206f], [0xd800, 0xdfff], [0xfeff, 0xfeff], [0xfff9, 0xfffb], [0x110bd, 0x110bd], [0x110cd, 0x110cd],
  [0x13430, 0x1343f], [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0001, 0xe0001], [0xe0020, 0xe007f],
];

/**
 * `printable` as a pattern: every character outside the refused BMP ranges, or a surrogate pair
 * (so a lone surrogate fails) that is not one of the refused astral characters. Each astral one is
 * written as its escaped pair, which is that code point with the `u` flag and those two code
 * units without it.
 */
function printablePattern(): string {
  const bmp = UNPRINTABLE_RANGES.filter(([a]) => a <= 0xffff).map(([a, b]) => (a === b ? hex4(a) : `${hex4(a)}-${hex4(b)}`)).join('');
  const astral: string[] = [];
  for (const [a, b] of UNPRINTABLE_RANGES.filter(([x]) => x > 0xffff)) {
    for (let c = a; c <= b; c++) {
      const s = String.fromCodePoint(c);
      astral.push(hex4(s.charCodeAt(0)) + hex4(s.charCodeAt(1)));
    }
  }
  return `^(?:(?!${astral.join('|')})(?:[^${bmp}]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]))*$`;
}

const V4_OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
const V4 = `(?:${V4_OCTET}\\.){3}${V4_OCTET}`;
const H = '[0-9a-fA-F]{1,4}';
/** IPv6 as Node's `net.isIP` reads it (the embedded IPv4 forms included), without a scope id. */
const V6 = '(?:'
  + `(?:${H}:){7}(?:${H}|:)|`
  + `(?:${H}:){6}(?:${V4}|:${H}|:)|`
  + `(?:${H}:){5}(?::${V4}|(?::${H}){1,2}|:)|`
  + `(?:${H}:){4}(?:(?::${H}){0,1}:${V4}|(?::${H}){1,3}|:)|`
  + `(?:${H}:){3}(?:(?::${H}){0,2}:${V4}|(?::${H}){1,4}|:)|`
  + `(?:${H}:){2}(?:(?::${H}){0,3}:${V4}|(?::${H}){1,5}|:)|`
  + `(?:${H}:){1}(?:(?::${H}){0,4}:${V4}|(?::${H}){1,6}|:)|`
  + `(?::(?:(?::${H}){0,5}:${V4}|(?::${H}){1,7}|:))`
  + ')';
/** A prefix length of 1 to 3 digits (leading zeros allowed) up to 32, and up to 128. */
const BITS_V4 = '(?:0{0,2}[0-9]|0?[12][0-9]|0?3[0-2])';
const BITS_V6 = '(?:0{0,2}[0-9]|0?[1-9][0-9]|1[01][0-9]|12[0-8])';

/** One DNS label of `fqdn` and `domain`: letters, digits, `_`, inner `-`, a leading `*`, 1..63 characters. */
const DNS_LABEL = '[A-Za-z0-9_*](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
/** One label of a redirect host: letters, digits and inner hyphens. */
const HOST_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';

/**
 * `http-url`, a little stricter than the format (which takes whatever the WHATWG parser takes): a
 * host name whose last label starts with a letter (so it never reads as an IPv4 number), a dotted
 * quad or a bracketed IPv6 address; no `xn--` label (the parser refuses bad punycode); a port
 * 1..65535; then any path, query and fragment without whitespace or control characters. No user
 * info, and the scheme in lower case as the format wants it.
 */
const PORT = '(?:0*(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))';
const NOT_PUNYCODE = '(?![xX][nN]--)';
const URL_HOST = `(?:(?:${NOT_PUNYCODE}${HOST_LABEL}\\.)*${NOT_PUNYCODE}[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?|${V4}|\\[${V6}\\])`;
const HTTP_URL = `^https?://${URL_HOST}(?::${PORT})?(?:[/?#][^\\s\\u0000-\\u001F\\u007F-\\u009F]*)?$`;

/** Format name → the keywords that say the same to a tool that does not know the format. */
export const FORMAT_HINTS: Readonly<Record<string, FormatHint>> = {
  printable: { pattern: printablePattern() },
  ip: { pattern: `^(?:${V4}|${V6})$`, minLength: 2 },
  ipv4: { pattern: `^${V4}$`, minLength: 7 },
  cidr: { pattern: `^(?:${V4}/${BITS_V4}|${V6}/${BITS_V6})$`, minLength: 4 },
  fqdn: { pattern: `^(?=.{2,254}$)(?:${DNS_LABEL}\\.)+$`, minLength: 2 },
  domain: { pattern: `^(?=.{1,253}\\.?$)(?:${DNS_LABEL}\\.)*${DNS_LABEL}\\.?$`, minLength: 1 },
  'redirect-host': { pattern: `^(?:\\*\\.)?(?=.{1,253}\\.?$)(?:${HOST_LABEL}\\.)*(?=[A-Za-z0-9-]*[A-Za-z])${HOST_LABEL}\\.?$`, minLength: 1 },
  'http-url': { pattern: HTTP_URL, minLength: 8 },
};
