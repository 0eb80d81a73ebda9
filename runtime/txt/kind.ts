import { TXT_MAX_VALUES, normalizeTxt, txtProblem, type TxtRecordRow } from './record.js';
import { isDomainName } from '../net/ip.js';
import { DEFAULT_TENANT, type ServiceRow } from '../../core/model/types.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { toFqdn } from '../tenancy/names.js';
import { API_VERSION, type Manifest, type ResourceKind } from '../ports/kinds.js';

type TxtSpec = { name: string; values: string[]; ttl?: number };

/**
 * `kind: TxtRecord` → one `txtrecord` row (docs/dns.md "TXT records"): `spec.name` is the DNS
 * name, `spec.values` the record set, `spec.ttl` optional (default 300). The rules the schema
 * cannot express (byte sizes, duplicate values, wildcards, one TxtRecord per name) are reported
 * at the manifest's file and line.
 */
export const txtRecordKind: ResourceKind = {
  kind: 'TxtRecord',
  apiVersion: API_VERSION,
  schema: 'txtrecord.v1.schema.json',
  schemaRefs: ['api-txt.v1.schema.json'],
  rows: ['txtrecord'],
  routes: 'runtime/txt/routes.ts',
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
  claim: (m) => (typeof m.spec.name === 'string' ? { name: m.spec.name, field: 'name', what: 'TXT records' } : undefined),
  againstActual: txtAgainstActual,
};

/** The first TxtRecord manifest naming `name` (any case, with or without the trailing dot). */
function firstDeclaring(manifests: Iterable<Manifest>, name: string): Manifest | undefined {
  for (const o of manifests) if (typeof o.spec.name === 'string' && normalizeTxt(o.spec as TxtSpec).name === name) return o;
  return undefined;
}

/**
 * Git TXT records against the running state: a name that holds a TXT record created over the REST
 * API (the default tenant's: delete it there first) or a service or TXT record of another tenant.
 * Another tenant's rows are never named. Pure.
 */
function txtAgainstActual(desired: readonly DesiredRow[], actual: Snapshot): string[] {
  const taken = new Map<string, string>();
  for (const s of rowsOf<ServiceRow>(actual, 'service').values()) if (s.tenantId !== DEFAULT_TENANT) taken.set(toFqdn(s.domain), 'a service of another tenant uses it');
  for (const t of rowsOf<TxtRecordRow>(actual, 'txtrecord').values()) {
    if (t.origin === 'git') continue;
    taken.set(t.name, t.tenantId === DEFAULT_TENANT ? `it holds TXT record ${t.id} created over the REST API; delete it there first` : 'a TXT record of another tenant uses it');
  }
  const out: string[] = [];
  for (const d of desired) {
    if (d.kind !== 'txtrecord') continue;
    const why = taken.get(toFqdn(String(d.fields.name)));
    if (why) out.push(`${d.source ?? '(unknown file)'}: TxtRecord "${d.key}": name ${String(d.fields.name)} is not available: ${why}`);
  }
  return out;
}
