import type { RedirectRow } from './rules.js';

/** What the listener sends for one request that a rule matched. */
export interface RedirectAnswer {
  status: 301 | 302 | 307 | 308;
  location: string;
  cacheControl: string;
}

/**
 * How long clients may keep a permanent redirect: an hour, so a changed or deleted 301 rule
 * reaches browsers within the hour instead of never (they cache a bare 301 indefinitely).
 */
export const PERMANENT_MAX_AGE = 3600;

/**
 * Bytes of a request target outside printable ASCII, percent-encoded again: Node reads the
 * target as latin1, so each such character is one byte of the original (RFC 3986 §2.1).
 */
const escapeTarget = (s: string) => s.replace(/[^\x21-\x7e]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

/** Path and query of a request target (origin-form, absolute-form, or `*`). */
function pathAndQuery(url: string): { path: string; query: string } {
  let target = url;
  if (/^https?:\/\//i.test(target)) {
    const slash = target.indexOf('/', target.indexOf('//') + 2);
    target = slash < 0 ? '/' : target.slice(slash);
  }
  if (!target.startsWith('/')) target = '/';
  const hash = target.indexOf('#');
  if (hash >= 0) target = target.slice(0, hash);
  const q = target.indexOf('?');
  return q < 0 ? { path: escapeTarget(target), query: '' } : { path: escapeTarget(target.slice(0, q)), query: escapeTarget(target.slice(q + 1)) };
}

/**
 * The answer of `rule` to a request (docs/redirects.md). GET and HEAD get the rule's code; other
 * methods get 308 for 301 and 307 for 302, which keep the method and body (RFC 9110 §15.4: a
 * client may turn a POST into a GET on 301 and 302). With `preservePath`, the request's path is
 * appended to the target's (one slash between; `/` alone keeps the target's path as written) and
 * its query to the target's (joined with `&`); the target's fragment stays last. Pure.
 */
export function answerRedirect(rule: Pick<RedirectRow, 'target' | 'code' | 'preservePath'>, method: string, url: string): RedirectAnswer {
  const keepsMethod = method === 'GET' || method === 'HEAD';
  const status = rule.code === 301 ? (keepsMethod ? 301 : 308) : (keepsMethod ? 302 : 307);
  const cacheControl = status === 301 || status === 308 ? `max-age=${PERMANENT_MAX_AGE}` : 'no-store';
  const t = new URL(rule.target);
  if (!rule.preservePath) return { status, location: t.href, cacheControl };
  const { path, query } = pathAndQuery(url);
  const base = t.pathname.endsWith('/') ? t.pathname.slice(0, -1) : t.pathname;
  const pathname = path === '/' ? t.pathname : `${base}${path}`;
  const q = [t.search.slice(1), query].filter((x) => x !== '').join('&');
  return { status, location: `${t.origin}${pathname}${q ? `?${q}` : ''}${t.hash}`, cacheControl };
}
