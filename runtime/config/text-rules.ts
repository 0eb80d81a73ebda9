/**
 * Text rules shared by every schema through the ajv formats of ./ajv.ts (`printable`, `http-url`),
 * so REST bodies, manifests and the config file refuse the same input (docs/api.md "Input rules").
 */

/**
 * Characters a name may not contain: control characters (Cc: C0 with NUL, DEL, C1), format
 * characters (Cf: zero-width space and joiners, the BOM, bidi embeddings, overrides U+202A–U+202E
 * and isolates U+2066–U+2069), lone surrogates (Cs), and the line and paragraph separators
 * (Zl, Zp). They make a name render differently from what it is (Trojan Source, CVE-2021-42574)
 * or break the log line, the terminal or the dashboard that shows it.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/** True when `s` holds only printable characters (see UNPRINTABLE). The empty string passes. */
export function isPrintableName(s: string): boolean {
  return !UNPRINTABLE.test(s);
}

/**
 * True for an absolute http or https URL with a host and, when a port is written, a port in
 * 1..65535. The WHATWG parser refuses ports above 65535 and hosts it cannot parse; it silently
 * drops tabs and newlines, so whitespace and control characters are refused before parsing.
 */
export function isHttpUrl(s: string): boolean {
  if (!/^https?:\/\/[^\s/]+/.test(s) || /[\s\p{Cc}]/u.test(s)) return false;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  if (u.hostname === '') return false;
  // `:0` parses (port "0") but names no service; a default port is reported as ''.
  return u.port === '' || (Number(u.port) >= 1 && Number(u.port) <= 65535);
}

const HOST_LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * True for a redirect rule's host (docs/redirects.md): a host name of letters, digits and inner
 * hyphens, optionally with one trailing dot, optionally a leading `*.` (every name below the
 * rest); no scheme, port, path, IP literal (the last label has a letter: RFC 3696 §2) or
 * underscore. At most 253 characters without the dot.
 */
export function isRedirectHost(s: string): boolean {
  const name = (s.startsWith('*.') ? s.slice(2) : s).replace(/\.$/, '');
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  return labels.every((l) => HOST_LABEL.test(l)) && /[A-Za-z]/.test(labels.at(-1)!);
}
