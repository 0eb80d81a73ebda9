import type { SettingProblem } from './settings.js';

/** One entry of a form's expected-field schema (forms-api.md §2 "Expected-field schema entry"). */
export interface SchemaField {
  name: string;
  type: string;
  required: boolean;
  maxLength?: number;
  label?: string;
  options?: string[] | null;
}

/** A form's expected-field schema: the fields, and whether submissions must match them (§3 rule 6). */
export interface FormSchema {
  fields: SchemaField[];
  enforce: boolean;
}

/** The schema of a new form: no fields, not enforced. */
export const EMPTY_SCHEMA: Readonly<FormSchema> = Object.freeze({ fields: [], enforce: false });

/** One entry in stored form: only the keys the spec lists, `options: null` dropped. */
function cleanField(f: SchemaField): SchemaField {
  const out: SchemaField = { name: f.name.trim(), type: f.type.trim(), required: f.required };
  if (f.maxLength !== undefined) out.maxLength = f.maxLength;
  if (f.label !== undefined) out.label = f.label;
  if (f.options !== undefined && f.options !== null) out.options = [...f.options];
  return out;
}

/**
 * The schema PUT /form/{id}/schema stores: the entries as sent (`enforce` default false). An empty
 * list clears the schema, enforcement included: there is nothing left to enforce. Pure.
 */
export function buildSchema(fields: readonly SchemaField[], enforce: boolean | undefined): FormSchema {
  if (fields.length === 0) return { fields: [], enforce: false };
  return { fields: fields.map(cleanField), enforce: enforce ?? false };
}

/** Rules the JSON schema cannot express: names not empty and unique. Returns every problem. */
export function schemaProblems(fields: readonly SchemaField[]): SettingProblem[] {
  const out: SettingProblem[] = [];
  const seen = new Map<string, number>();
  fields.forEach((f, i) => {
    const name = f.name.trim();
    if (name === '') out.push({ field: `fields[${i}].name`, rule: 'must not be empty' });
    const first = seen.get(name);
    if (first !== undefined) out.push({ field: `fields[${i}].name`, rule: `"${name}" is already the name of fields[${first}]` });
    else seen.set(name, i);
  });
  return out;
}
