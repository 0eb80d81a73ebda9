import type { TxtRecordRow } from '../../runtime/txt/record.js';
import { Ajv, type ValidateFunction } from 'ajv';
import { addProjectFormats, pointerToPath } from '../../runtime/config/ajv.js';
import { describeSchemaError, sortProblemStrings } from '../../runtime/config/problem.js';
import { loadSchema } from '../../runtime/paths.js';
import { rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { DEFAULT_TENANT, type ServiceRow } from '../../core/model/types.js';
import { toFqdn, type NamedService } from '../../runtime/tenancy/names.js';
import { REDIRECT_KIND, redirectClaim, type RedirectRow } from '../../runtime/redirect/rules.js';
import { desiredClaim, foreignNameProblems, manifestNameProblems } from './names.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { lineOf } from '../../runtime/config/yaml-source.js';
import { manifestKind, manifestKindNames, type ValidationEnv } from '../load/kinds.js';
import { problemAt, type Manifest } from '../load/manifest.js';
import '../load/index.js';

// verbose: errors carry the failing schema and value, so messages can name what was expected
const ajv = addProjectFormats(new Ajv({ allErrors: true, useDefaults: false, strict: false, verbose: true }));
for (const f of ['resources.v1.schema.json', 'api-forms.v1.schema.json', 'api-formkeys.v1.schema.json', 'api-redirects.v1.schema.json', 'api-txt.v1.schema.json', 'api-alerttargets.v1.schema.json', 'manifest.v1.schema.json']) ajv.addSchema(loadSchema(f));
const envelope = ajv.getSchema('manifest.v1.schema.json')!;
const compiled = new Map<string, ValidateFunction>();

/** The compiled schema of a kind's schema file (compiled once, on first use). */
function schemaFor(file: string): ValidateFunction {
  let v = compiled.get(file);
  if (!v) {
    v = ajv.getSchema(file) ?? ajv.compile(loadSchema(file));
    compiled.set(file, v);
  }
  return v;
}

/** Orders `file:line:col: …` problems by file, then line, then column (stable for equal places); in place. */
export function sortProblems(problems: string[]): string[] {
  return sortProblemStrings(problems);
}

function schemaProblems(m: Manifest, validate: ValidateFunction): string[] {
  if (validate(m.raw)) return [];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const e of validate.errors ?? []) {
    // anyOf branches repeat the same failure; the combined anyOf error says it once
    if (e.keyword === 'anyOf' && (validate.errors ?? []).some((x) => x !== e && x.instancePath === e.instancePath && x.keyword !== 'anyOf')) continue;
    const path = pointerToPath(e.instancePath);
    if (e.keyword === 'additionalProperties') path.push((e.params as { additionalProperty: string }).additionalProperty);
    const d = describeSchemaError(e);
    const rule = path.length === 1 && path[0] === 'apiVersion' ? 'api-version' : d.rule;
    const text = problemAt(m.src, path, d.text, undefined, { rule, at: d.at, omitValue: d.omitValue });
    if (!seen.has(text)) { seen.add(text); out.push(text); }
  }
  return out;
}

/**
 * Validates manifests and maps them to desired rows: the envelope and the kind's schema, unknown
 * kinds, unique names per kind, then each kind's semantic checks (references resolve, ip:port unique
 * per pool, required-when rules, names delegated to another tenant when `env.names` is known).
 * Collects every problem, each as `file:line:col: path = value: what (rule)`, sorted by file, line
 * and column. `desired` is only meaningful when `problems` is empty. Pure.
 */
export function validateManifests(manifests: readonly Manifest[], env: ValidationEnv = {}): { desired: DesiredRow[]; problems: string[] } {
  const problems: string[] = [];
  const checked: Manifest[] = [];
  const valid = new Set<Manifest>();
  const index = new Map<string, Map<string, Manifest>>();
  for (const m of manifests) {
    const k = manifestKind(m.kind);
    if (!k) {
      const env0 = schemaProblems(m, envelope);
      problems.push(...env0);
      if (m.kind !== '' || env0.length === 0) problems.push(problemAt(m.src, ['kind'], `unknown kind; known kinds: ${manifestKindNames().join(', ')}`, undefined, { rule: 'unknown-kind' }));
      continue;
    }
    const found = schemaProblems(m, schemaFor(k.schema));
    problems.push(...found);
    if (m.name) {
      let byName = index.get(m.kind);
      if (!byName) index.set(m.kind, (byName = new Map()));
      const first = byName.get(m.name);
      if (first) {
        problems.push(problemAt(m.src, ['metadata', 'name'], `${m.kind} "${m.name}" is already declared at ${first.file}:${lineOf(first.src, ['metadata', 'name']) ?? 1}; names are unique per kind`, undefined, { rule: 'unique-name' }));
        continue;
      }
      byName.set(m.name, m);
    }
    checked.push(m);
    if (found.length === 0) valid.add(m);
  }
  const desired: DesiredRow[] = [];
  for (const m of checked) {
    const k = manifestKind(m.kind)!;
    try {
      k.check?.(m, index, env, (path, rule) => problems.push(problemAt(m.src, path, rule)));
    } catch {
      // a semantic rule tripped over a shape the schema already reported; the other rules still ran
    }
    if (valid.has(m)) desired.push(...k.map(m));
  }
  problems.push(...manifestNameProblems(valid, env.names));
  return { desired, problems: sortProblemStrings(problems) };
}

/**
 * Checks desired rows against the running state: a git service may not take a domain already
 * served by a REST-owned service, nor a git redirect rule a host a REST-owned rule has; neither
 * may take the name of another tenant's service or redirect rule, nor, with `env.names`, an
 * undelegated name under or above one (docs/api.md "Name ownership", docs/redirects.md "Names").
 * Returns problems naming the manifest file; another tenant's rows are never named (tenant roles
 * read GitOps status). Pure.
 */
export function checkAgainstActual(desired: readonly DesiredRow[], actual: Snapshot, env: ValidationEnv = {}): string[] {
  const apiDomains = new Map<string, ServiceRow>();
  const apiHosts = new Map<string, RedirectRow>();
  const foreign: NamedService[] = [];
  const foreignNames = new Map<string, NamedService>();
  const addForeign = (n: NamedService) => { foreign.push(n); foreignNames.set(toFqdn(n.domain), n); };
  for (const s of rowsOf<ServiceRow>(actual, 'service').values()) {
    if (s.origin === 'git') continue;
    apiDomains.set(toFqdn(s.domain), s);
    if (s.tenantId !== DEFAULT_TENANT) addForeign(s);
  }
  for (const r of rowsOf<RedirectRow>(actual, REDIRECT_KIND).values()) {
    if (r.origin === 'git') continue;
    apiHosts.set(r.host, r);
    if (r.tenantId !== DEFAULT_TENANT) addForeign(redirectClaim(r));
  }
  const out: string[] = [];
  for (const d of desired) {
    const claim = desiredClaim(d);
    if (!claim) continue;
    const where = `${d.source ?? '(unknown file)'}: ${claim.label} ${claim.name}`;
    if (d.kind === 'service') {
      const taken = apiDomains.get(claim.name);
      if (taken) {
        out.push(taken.tenantId === DEFAULT_TENANT
          ? `${where} is already served by service "${taken.name}" created over the REST API; delete it there first`
          : `${where} is not available: a service of another tenant uses it`);
        continue;
      }
    } else {
      const taken = apiHosts.get(String(d.fields.host));
      if (taken && taken.tenantId === DEFAULT_TENANT) { out.push(`${where} already has a redirect rule created over the REST API (${taken.id}); delete it there first`); continue; }
    }
    const other = foreignNames.get(claim.name);
    if (other) out.push(`${where} is not available: a ${other.kind === 'redirect' ? 'redirect rule' : 'service'} of another tenant uses it`);
  }
  if (env.names) out.push(...foreignNameProblems(desired, foreign, env.names));
  out.push(...txtAgainstActual(desired, actual));
  return out;
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
