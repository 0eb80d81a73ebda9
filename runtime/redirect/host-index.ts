import { rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { nameOwner, unservedReason, type NameRules } from '../tenancy/names.js';
import { isWildcard, ownedName, REDIRECT_KIND, redirectClaim, type RedirectRow } from './rules.js';

/**
 * The redirect listener's view of the rule table: exact hosts and wildcard suffixes, each a map
 * lookup. Built once per version of the `redirect` table (a snapshot shares the table object with
 * the previous one until a plan changes a rule), never per request.
 */
export interface RedirectIndex {
  exact: ReadonlyMap<string, RedirectRow>;
  /** `example.com` → the rule `*.example.com` */
  wildcard: ReadonlyMap<string, RedirectRow>;
}

/**
 * Indexes rules by host. A rule whose name another tenant owns (written before a delegation
 * moved the name) or a tenant's API rule on a reserved name is left out, as the DNS index leaves
 * such services out (docs/api.md "Name ownership"); `onUnserved` hears of each. Two rows with one
 * host cannot exist (the API and validation refuse it); if they did, the first in storage order
 * wins on every node.
 */
export function buildRedirectIndex(rows: Iterable<RedirectRow>, names: NameRules, onUnserved?: (row: RedirectRow, reason: string) => void): RedirectIndex {
  const exact = new Map<string, RedirectRow>();
  const wildcard = new Map<string, RedirectRow>();
  for (const r of rows) {
    const reason = unservedReason(names, redirectClaim(r));
    if (reason !== undefined) { onUnserved?.(r, reason); continue; }
    const map = isWildcard(r.host) ? wildcard : exact;
    const key = ownedName(r.host);
    if (!map.has(key)) map.set(key, r);
  }
  return { exact, wildcard };
}

/**
 * The rule answering `host` (lower case, no port, no trailing dot): the exact rule, else the
 * wildcard of the nearest enclosing name (`*.b.example.com` before `*.example.com`). A wildcard
 * never answers a name delegated to another tenant than its own.
 */
export function lookupRedirect(idx: RedirectIndex, host: string, names: NameRules): RedirectRow | undefined {
  const hit = idx.exact.get(host);
  if (hit) return hit;
  if (idx.wildcard.size === 0) return undefined;
  for (let dot = host.indexOf('.'); dot >= 0; dot = host.indexOf('.', dot + 1)) {
    const rule = idx.wildcard.get(host.slice(dot + 1));
    if (!rule) continue;
    const owner = nameOwner(names, host);
    return owner === undefined || owner === rule.tenantId ? rule : undefined;
  }
  return undefined;
}

const cache = new WeakMap<object, { names: NameRules; idx: RedirectIndex }>();

/** The index of the snapshot's rules, built on first use per version of the rule table (and name rules). */
export function redirectIndexOf(s: Snapshot, names: NameRules, onUnserved?: (row: RedirectRow, reason: string) => void): RedirectIndex {
  const table = rowsOf<RedirectRow>(s, REDIRECT_KIND);
  const hit = cache.get(table);
  if (hit && hit.names === names) return hit.idx;
  const idx = buildRedirectIndex(table.values(), names, onUnserved);
  cache.set(table, { names, idx });
  return idx;
}

/**
 * The host a request names, as the index keys it: the Host header (or the authority of an
 * absolute-form request target, which takes precedence: RFC 9112 §3.2.2) without its port,
 * lower-cased, without a trailing dot. Undefined when there is none or it is not a host name.
 */
export function requestHost(hostHeader: string | undefined, url: string | undefined): string | undefined {
  let raw = hostHeader;
  if (url !== undefined && /^https?:\/\//i.test(url)) {
    try { raw = new URL(url).host; } catch { return undefined; }
  }
  if (raw === undefined) return undefined;
  const h = raw.trim().toLowerCase();
  if (h.startsWith('[')) return undefined; // an IPv6 literal names no rule
  const name = h.replace(/:\d*$/, '').replace(/\.$/, '');
  return /^[a-z0-9.-]{1,253}$/.test(name) ? name : undefined;
}
