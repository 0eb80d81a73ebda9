import { isWildcard, normalHost, ownedName, REDIRECT_KIND, redirectClaim, redirectFields, redirectProblems, type RedirectRow } from './rules.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import { toFqdn, type NamedService } from '../tenancy/names.js';
import { API_VERSION, firstByKey, type ManifestIndex, type ResourceKind } from '../ports/kinds.js';

/** The first Redirect declaring each (normalised) host. */
const firstByHost = (index: ManifestIndex) => firstByKey(index, 'Redirect', (m) => normalHost(String(m.spec.host)));

/**
 * `kind: Redirect` → one `redirect` row (docs/redirects.md), keyed by `metadata.name`, with the
 * REST API's defaults (code 302, preservePath true). A host is declared by one Redirect only; its
 * name (a wildcard's base) follows the name ownership rules of services (docs/redirects.md "Names").
 */
export const redirectKind: ResourceKind = {
  kind: 'Redirect',
  apiVersion: API_VERSION,
  schema: 'redirect.v1.schema.json',
  schemaRefs: ['api-redirects.v1.schema.json'],
  rows: [REDIRECT_KIND],
  routes: 'runtime/redirect/routes.ts',
  map(m) {
    return [{ kind: REDIRECT_KIND, key: m.name, source: m.file, fields: { ...redirectFields(m.spec) } }];
  },
  check(m, index, _env, report) {
    if (typeof m.spec.host === 'string') {
      const first = firstByHost(index).get(normalHost(m.spec.host));
      if (first && first !== m) report(['spec', 'host'], `host is already declared by Redirect "${first.name}" (${first.file})`);
    }
    if (typeof m.spec.target === 'string') for (const p of redirectProblems({ target: m.spec.target })) report(['spec', p.field], p.rule);
  },
  claim(m) {
    if (typeof m.spec.host !== 'string') return undefined;
    const host = normalHost(m.spec.host);
    return { name: ownedName(host), wildcard: isWildcard(host), field: 'host', what: 'redirect rules' };
  },
  rowClaims: {
    noun: 'redirect rule',
    claim: (d) => ({ name: toFqdn(ownedName(String(d.fields.host))), label: `Redirect "${d.key}": host ${String(d.fields.host)}, name` }),
    against(actual) {
      const api = new Map<string, RedirectRow>();
      const foreign: NamedService[] = [];
      for (const r of rowsOf<RedirectRow>(actual, REDIRECT_KIND).values()) {
        if (r.origin === 'git') continue;
        api.set(r.host, r);
        if (r.tenantId !== DEFAULT_TENANT) foreign.push(redirectClaim(r));
      }
      return {
        foreign,
        clash(d) {
          // another tenant's rule at this host is the other-tenant check's concern
          const taken = api.get(String(d.fields.host));
          return taken && taken.tenantId === DEFAULT_TENANT ? `already has a redirect rule created over the REST API (${taken.id}); delete it there first` : undefined;
        },
      };
    },
  },
};
