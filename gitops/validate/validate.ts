import { Ajv, type ValidateFunction } from 'ajv';
import { addProjectFormats, pointerToPath } from '../../runtime/config/ajv.js';
import { describeSchemaError, sortProblemStrings } from '../../runtime/config/problem.js';
import { loadSchema } from '../../runtime/paths.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';
import { toFqdn, type NamedService } from '../../runtime/tenancy/names.js';
import { foreignNameProblems, manifestNameProblems } from './names.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { lineOf } from '../../runtime/config/yaml-source.js';
import type { ResourceKind, RowClaims, ValidationEnv } from '../../runtime/ports/kinds.js';
import { installedKinds, type KindRegistry } from '../kinds/registry.js';
import { problemAt, type Manifest } from '../load/manifest.js';

// verbose: errors carry the failing schema and value, so messages can name what was expected
const ajv = addProjectFormats(new Ajv({ allErrors: true, useDefaults: false, strict: false, verbose: true }));
ajv.addSchema(loadSchema('manifest.v1.schema.json'));
const envelope = ajv.getSchema('manifest.v1.schema.json')!;
const compiled = new Map<string, ValidateFunction>();

/** The compiled schema of a kind (with the schemas it refers to; compiled once, on first use). */
function schemaFor(k: ResourceKind): ValidateFunction {
  let v = compiled.get(k.schema);
  if (!v) {
    for (const f of k.schemaRefs ?? []) if (!ajv.getSchema(f)) ajv.addSchema(loadSchema(f));
    v = ajv.getSchema(k.schema) ?? ajv.compile(loadSchema(k.schema));
    compiled.set(k.schema, v);
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
export function validateManifests(manifests: readonly Manifest[], env: ValidationEnv = {}, kinds: KindRegistry = installedKinds()): { desired: DesiredRow[]; problems: string[] } {
  const problems: string[] = [];
  const checked: Manifest[] = [];
  const valid = new Set<Manifest>();
  const index = new Map<string, Map<string, Manifest>>();
  for (const m of manifests) {
    const k = kinds.get(m.kind);
    if (!k) {
      const env0 = schemaProblems(m, envelope);
      problems.push(...env0);
      if (m.kind !== '' || env0.length === 0) problems.push(problemAt(m.src, ['kind'], `unknown kind; known kinds: ${kinds.names().join(', ')}`, undefined, { rule: 'unknown-kind' }));
      continue;
    }
    const found = schemaProblems(m, schemaFor(k));
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
    const k = kinds.get(m.kind)!;
    try {
      k.check?.(m, index, env, (path, rule) => problems.push(problemAt(m.src, path, rule)));
    } catch {
      // a semantic rule tripped over a shape the schema already reported; the other rules still ran
    }
    if (valid.has(m)) desired.push(...k.map(m));
  }
  problems.push(...manifestNameProblems(valid, env.names, kinds));
  return { desired, problems: sortProblemStrings(problems) };
}

/**
 * Checks desired rows against the running state, with each kind's name claims (`rowClaims`): a
 * git service may not take a domain already served by a REST-owned service, nor a git redirect
 * rule a host a REST-owned rule has; neither may take the name of another tenant's service or
 * redirect rule, nor, with `env.names`, an undelegated name under or above one (docs/api.md "Name
 * ownership", docs/redirects.md "Names"). Then each kind's own checks (`againstActual`: TXT
 * records). Returns problems naming the manifest file; another tenant's rows are never named
 * (tenant roles read GitOps status). Pure.
 */
export function checkAgainstActual(desired: readonly DesiredRow[], actual: Snapshot, env: ValidationEnv = {}, kinds: KindRegistry = installedKinds()): string[] {
  const foreign: NamedService[] = [];
  const foreignNames = new Map<string, { n: NamedService; noun: string }>();
  const nouns = new Map<NamedService, string>();
  const clashes = new Map<RowClaims, ReturnType<RowClaims['against']>['clash']>();
  for (const k of kinds.all()) {
    if (!k.rowClaims) continue;
    const got = k.rowClaims.against(actual);
    clashes.set(k.rowClaims, got.clash);
    for (const n of got.foreign) {
      foreign.push(n);
      nouns.set(n, k.rowClaims.noun);
      foreignNames.set(toFqdn(n.domain), { n, noun: k.rowClaims.noun });
    }
  }
  const out: string[] = [];
  for (const d of desired) {
    const claims = kinds.ofRow(d.kind)?.rowClaims;
    const claim = claims?.claim(d);
    if (!claims || !claim) continue;
    const where = `${d.source ?? '(unknown file)'}: ${claim.label} ${claim.name}`;
    const clash = clashes.get(claims)?.(d, claim.name);
    if (clash) { out.push(`${where} ${clash}`); continue; }
    const other = foreignNames.get(claim.name);
    if (other) out.push(`${where} is not available: a ${other.noun} of another tenant uses it`);
  }
  if (env.names) out.push(...foreignNameProblems(desired, foreign, env.names, kinds, (n) => nouns.get(n) ?? ''));
  for (const k of kinds.all()) if (k.againstActual) out.push(...k.againstActual(desired, actual));
  return out;
}
