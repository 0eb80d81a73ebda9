import { TXT_MAX_VALUES, normalizeTxt, txtProblem } from '../../runtime/txt/record.js';
import { isDomainName } from '../../runtime/net/ip.js';
import type { Manifest } from './manifest.js';
import { registerManifestKind } from './kinds.js';

type TxtSpec = { name: string; values: string[]; ttl?: number };

/**
 * `kind: TxtRecord` → one `txtrecord` row (docs/dns.md "TXT records"): `spec.name` is the DNS
 * name, `spec.values` the record set, `spec.ttl` optional (default 300). The rules the schema
 * cannot express (byte sizes, duplicate values, wildcards, one TxtRecord per name) are reported
 * at the manifest's file and line.
 */
registerManifestKind({
  kind: 'TxtRecord',
  schema: 'txtrecord.v1.schema.json',
  map(m) {
    return [{ kind: 'txtrecord', key: m.name, source: m.file, fields: { ...normalizeTxt(m.spec as TxtSpec) }, refs: [] }];
  },
  check(m, index, _env, report) {
    const { name: rawName, values } = m.spec;
    // shapes the schema reports already: checked again here they would be reported twice
    if (!isDomainName(rawName) || !Array.isArray(values) || values.length === 0 || values.length > TXT_MAX_VALUES || !values.every((v) => typeof v === 'string')) return;
    const f = normalizeTxt(m.spec as TxtSpec);
    const p = txtProblem(f);
    if (p) { report(p.index === undefined ? ['spec', p.field] : ['spec', p.field, p.index], p.rule); return; }
    const other = firstDeclaring(index.get('TxtRecord')?.values() ?? [], f.name);
    if (other && other !== m) report(['spec', 'name'], `name ${f.name} is already declared by TxtRecord "${other.name}" (${other.file}): one TxtRecord per name, with all its values`);
  },
});

/** The first TxtRecord manifest naming `name` (any case, with or without the trailing dot). */
function firstDeclaring(manifests: Iterable<Manifest>, name: string): Manifest | undefined {
  for (const o of manifests) if (typeof o.spec.name === 'string' && normalizeTxt(o.spec as TxtSpec).name === name) return o;
  return undefined;
}
