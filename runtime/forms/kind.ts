import { createSettings, settingsProblems, type SettingProblem, type SettingsInput } from './forms/settings.js';
import { buildSchema, schemaProblems, type SchemaField } from './forms/schema-fields.js';
import { actionFields, actionProblems, type ActionInput } from './forms/actions.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { API_VERSION, type Manifest, type Report, type ResourceKind } from '../ports/kinds.js';

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

/** Natural keys of form rows: the form by its manifest name, an action by its place in `spec.actions`. */
export const formKeys = {
  form: (form: string) => form,
  action: (form: string, index: number) => `${form}#${index}`,
};

/** The settings of a schema-valid manifest: `spec` with `spec.name` defaulting to `metadata.name`. */
function settingsOf(m: Manifest) {
  return createSettings({ ...(m.spec as SettingsInput), name: typeof m.spec.name === 'string' ? m.spec.name : m.name });
}

/** `spec.schema` of a schema-valid manifest. */
function schemaOf(m: Manifest): { fields: SchemaField[]; enforce: boolean | undefined } {
  const s = (m.spec.schema ?? {}) as { fields?: SchemaField[]; enforce?: boolean };
  return { fields: s.fields ?? [], enforce: s.enforce };
}

/** `blocked_ips[1]` or `config.url` or `conditions[0].value` → path segments. */
export function fieldPath(field: string): (string | number)[] {
  return field.split(/\.|\[(\d+)\]/).filter((s) => s !== undefined && s !== '').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

const reportAll = (report: Report, at: (string | number)[], problems: readonly SettingProblem[]) => {
  for (const p of problems) report([...at, ...fieldPath(p.field)], p.rule);
};

/**
 * `kind: Form` (docs/forms.md "Forms in git") → one form row (settings and schema, the REST API's
 * defaults and rules) and one action row per `spec.actions[]`, children of the form. Git forms
 * belong to the tenant of every git row and are not held to a plan (the operator writes them);
 * over /public/v1 they are read-only (409 naming the file).
 */
export const formKind: ResourceKind = {
  kind: 'Form',
  apiVersion: API_VERSION,
  schema: 'form.v1.schema.json',
  schemaRefs: ['api-forms.v1.schema.json'],
  rows: ['form', 'formaction'],
  routes: 'runtime/forms/forms/routes/forms.ts',
  map(m) {
    const source = m.file;
    const s = schemaOf(m);
    const rows: DesiredRow[] = [{
      kind: 'form', key: formKeys.form(m.name), source,
      fields: { ...settingsOf(m), schema: buildSchema(s.fields, s.enforce), createdAt: null, updatedAt: null },
    }];
    list(m.spec.actions).forEach((a, i) => {
      rows.push({
        kind: 'formaction', key: formKeys.action(m.name, i), source,
        fields: { ...actionFields(a as unknown as ActionInput), createdAt: null, updatedAt: null }, // reason: schema-valid (form.v1.schema.json)
        refs: [{ field: 'formId', kind: 'form', key: formKeys.form(m.name) }],
      });
    });
    return rows;
  },
  check(m, _index, _env, report) {
    reportAll(report, ['spec'], settingsProblems(settingsOf(m)));
    reportAll(report, ['spec', 'schema'], schemaProblems(schemaOf(m).fields));
    list(m.spec.actions).forEach((a, i) => {
      reportAll(report, ['spec', 'actions', i], actionProblems(actionFields(a as unknown as ActionInput))); // reason: schema-valid (form.v1.schema.json)
    });
  },
};

/**
 * `kind: ApiKey` → one `formkey` row (docs/forms.md): the key's name is `metadata.name`, the hash
 * and scopes come from `spec`, and `spec.form` names a Form manifest and becomes a reference the
 * planner resolves to the form's id. Only the hash is in the repo; the secret never is. A git key
 * has no creation time (`createdAt` 0) and is deleted in git, not over REST.
 */
export const apiKeyKind: ResourceKind = {
  kind: 'ApiKey',
  apiVersion: API_VERSION,
  schema: 'apikey.v1.schema.json',
  schemaRefs: ['api-formkeys.v1.schema.json'],
  rows: ['formkey'],
  routes: 'runtime/forms/keys/routes.ts',
  map(m) {
    const form = typeof m.spec.form === 'string' ? m.spec.form : null;
    return [{
      kind: 'formkey', key: m.name, source: m.file,
      fields: { name: m.name, keyHash: String(m.spec.hash), scopes: [...new Set(m.spec.scopes as string[])], createdAt: 0 },
      refs: [{ field: 'formId', kind: 'form', key: form === null ? null : formKeys.form(form) }],
    }];
  },
  check(m, index, _env, report) {
    const form = typeof m.spec.form === 'string' ? m.spec.form : undefined;
    if (form !== undefined && !index.get('Form')?.has(form)) report(['spec', 'form'], `no Form named "${form}" in the repo`);
    for (const other of index.get('ApiKey')?.values() ?? []) {
      if (other !== m && other.spec.hash === m.spec.hash) { report(['spec', 'hash'], `the same key as ApiKey "${other.name}" (${other.file})`); break; }
    }
  },
};
