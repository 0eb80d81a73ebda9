import type { FormSchema, SchemaField } from '../forms/schema-fields.js';
import type { SubmissionFields } from '../submissions/types.js';
import { valuesOf } from './fields.js';

/** One way a submission does not match its form's schema. */
export interface Mismatch { field: string; message: string }

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The value rule of a schema type, or null when the type has none. Types are free text in the
 * spec; these are the HTML input types whose values have a shape: `email`, `number`, `url`,
 * `date`, `checkbox`/`boolean`. Any other type (`text`, `textarea`, `tel`, `select`…) takes any text.
 */
function typeProblem(type: string, value: string): string | null {
  switch (type.toLowerCase()) {
    case 'email': return EMAIL.test(value) ? null : 'must be an e-mail address';
    case 'number': return value.trim() !== '' && Number.isFinite(Number(value)) ? null : 'must be a number';
    case 'url': return /^https?:\/\/\S+$/i.test(value) ? null : 'must be an http or https URL';
    case 'date': return DATE.test(value) && !Number.isNaN(Date.parse(value)) ? null : 'must be a date (YYYY-MM-DD)';
    default: return null;
  }
}

/** The problems of one schema field in a submission. */
function fieldProblems(f: SchemaField, fields: SubmissionFields, files: ReadonlySet<string>): string[] {
  const values = valuesOf(fields, f.name).filter((v) => v.trim() !== '');
  const isFile = f.type.toLowerCase() === 'file';
  const present = isFile ? files.has(f.name) : values.length > 0;
  if (!present) return f.required ? ['is required'] : [];
  if (isFile) return [];
  const out: string[] = [];
  for (const v of values) {
    const p = typeProblem(f.type, v);
    if (p) { out.push(p); break; }
  }
  if (f.maxLength !== undefined && values.some((v) => [...v].length > f.maxLength!)) out.push(`must be at most ${f.maxLength} characters`);
  if (f.options && f.options.length > 0) {
    const bad = values.find((v) => !f.options!.includes(v));
    if (bad !== undefined) out.push(`"${bad.slice(0, 60)}" is not one of the options (${f.options.join(', ')})`);
  }
  return out;
}

/**
 * How a submission breaks its form's expected-field schema (forms-api.md §3 rule 6): every
 * required field present and not blank (a `file` field needs a file), values of the shape of
 * their type, at most `maxLength` characters, one of `options` when there are some. Fields the
 * schema does not name are allowed (the honeypot, a CAPTCHA token, hidden inputs). Pure.
 */
export function schemaMismatches(schema: FormSchema, fields: SubmissionFields, files: ReadonlySet<string>): Mismatch[] {
  return schema.fields.flatMap((f) => fieldProblems(f, fields, files).map((message) => ({ field: f.name, message })));
}
