/** Where a post came from: the page's origin (`https://shop.example.com:8443`), or null when the request names none. */
export function pageOrigin(origin: string | undefined, referer: string | undefined): string | null {
  for (const v of [origin, referer]) {
    if (!v || v === 'null') continue;
    try {
      const u = new URL(v);
      if (u.protocol === 'http:' || u.protocol === 'https:') return u.origin;
    } catch { /* not a URL: try the next header */ }
  }
  return null;
}

/** True when a host matches one `allowed_domains` entry that is a host (`example.com`, `*.example.com`, an IP). */
function hostMatches(entry: string, host: string): boolean {
  const e = entry.toLowerCase().replace(/\.$/, '');
  if (e.startsWith('*.')) return host.endsWith(e.slice(1)) && host.length > e.length - 1;
  return host === e;
}

/** The host of an origin without brackets (`[::1]` → `::1`) and in lower case. */
function hostOf(u: URL): string {
  return u.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/**
 * Whether a form accepts a post from this page origin (docs/forms.md "Submitting"): any page when
 * `allowed` is empty; otherwise the origin must match an entry. A host entry (`example.com`,
 * `*.example.com` for its subdomains, an IP address) matches on any scheme and port; a URL entry
 * matches its exact origin (scheme, host and port). A post that names no origin (no Origin and no
 * Referer) is refused when the list is not empty. Pure.
 */
export function originAllowed(allowed: readonly string[], origin: string | null): boolean {
  if (allowed.length === 0) return true;
  if (origin === null) return false;
  const page = new URL(origin);
  const host = hostOf(page);
  return allowed.some((entry) => {
    if (/^https?:\/\//i.test(entry)) {
      try {
        return new URL(entry).origin === page.origin;
      } catch {
        return false;
      }
    }
    return hostMatches(entry.replace(/^\[(.*)\]$/, '$1'), host);
  });
}
