import { normalHost, REDIRECT_KIND, redirectFields, redirectProblems } from '../../runtime/redirect/rules.js';
import { firstByKey, registerManifestKind, type ManifestIndex } from './kinds.js';

/** The first Redirect declaring each (normalised) host. */
const firstByHost = (index: ManifestIndex) => firstByKey(index, 'Redirect', (m) => normalHost(String(m.spec.host)));

/**
 * `kind: Redirect` → one `redirect` row (docs/redirects.md), keyed by `metadata.name`, with the
 * REST API's defaults (code 302, preservePath true). A host is declared by one Redirect only.
 */
registerManifestKind({
  kind: 'Redirect',
  schema: 'redirect.v1.schema.json',
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
});
