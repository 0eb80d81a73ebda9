import type { GenericRow } from '../../core/model/types.js';

/**
 * Redirect rules (docs/redirects.md): rows of kind `redirect`, written through the one write path
 * by the REST API and by `kind: Redirect` manifests alike. Pure.
 */

/** Row kind of a redirect rule (core/model/kinds.ts). */
export const REDIRECT_KIND = 'redirect';

/** 301 (permanent) or 302 (temporary). */
export type RedirectCode = 301 | 302;

/** The code a rule gets when none is sent: temporary, so a mistaken rule is not cached for good. */
export const DEFAULT_REDIRECT_CODE: RedirectCode = 302;

/** The fields of a rule, as the REST API and manifests give them after the schema checked them. */
export interface RedirectFields {
  /** lower-cased, no trailing dot; `*.example.com` for every name below example.com */
  host: string;
  /** absolute http(s) URL */
  target: string;
  code: RedirectCode;
  /** append the request's path and query to the target */
  preservePath: boolean;
}

export interface RedirectRow extends GenericRow, RedirectFields { kind: 'redirect' }

/** A host as stored and looked up: lower case, without a trailing dot. */
export const normalHost = (host: string): string => host.toLowerCase().replace(/\.$/, '');

/** True for a wildcard host (`*.example.com`). */
export const isWildcard = (host: string): boolean => host.startsWith('*.');

/**
 * Row fields from a schema-valid body or manifest spec: the host normalised, code 302 and
 * preservePath true unless sent. Shared by the REST API and the git loader so both mean the same.
 */
export function redirectFields(b: Record<string, unknown>): RedirectFields {
  return {
    host: normalHost(String(b.host)),
    target: String(b.target),
    code: b.code === 301 ? 301 : DEFAULT_REDIRECT_CODE,
    preservePath: typeof b.preservePath === 'boolean' ? b.preservePath : true,
  };
}

/**
 * Rules the schema cannot express, as `{field, rule}`: a target must not carry a user name or
 * password (the redirect would hand them to every client). Empty when the fields are fine.
 */
export function redirectProblems(f: Pick<RedirectFields, 'target'>): { field: keyof RedirectFields; rule: string }[] {
  const out: { field: keyof RedirectFields; rule: string }[] = [];
  let u: URL | undefined;
  try { u = new URL(f.target); } catch { u = undefined; }
  if (u && (u.username !== '' || u.password !== '')) out.push({ field: 'target', rule: 'must not carry a user name or password' });
  return out;
}

/**
 * The DNS name a host claims under the name-ownership rules (runtime/tenancy/names.ts): the host
 * itself, or for a wildcard the name below which it answers (`*.example.com` → `example.com`), so
 * a wildcard competes with every name at or under that name.
 */
export const ownedName = (host: string): string => (isWildcard(host) ? host.slice(2) : host);

/** A redirect row as a named row for the name-ownership rules. */
export const redirectClaim = (r: RedirectRow) => ({ kind: REDIRECT_KIND, id: r.id, name: `redirect ${r.host}`, domain: ownedName(r.host), tenantId: r.tenantId, origin: r.origin });
