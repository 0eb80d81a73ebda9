import { badRequest, GslbError } from '../../errors.js';
import type { SubmissionFields } from '../submissions/types.js';

/** The longest field name a submission may use. */
export const FIELD_NAME_MAX = 200;

/**
 * Collects a submission's fields as they arrive, in order: a repeated name (checkboxes, a
 * multi-select, `tags[]`) gathers its values in a list; the `[]` suffix of PHP-style names is
 * dropped. An empty name is skipped; a name past 200 characters is a 400, more than `maxFields`
 * fields a 413, so a hostile body cannot grow the record without bound.
 */
export class FieldCollector {
  readonly fields: SubmissionFields = Object.create(null) as SubmissionFields;
  private count = 0;

  constructor(private readonly maxFields: number) {}

  add(rawName: string, value: string): void {
    const name = rawName.endsWith('[]') ? rawName.slice(0, -2) : rawName;
    if (name === '') return;
    if (name.length > FIELD_NAME_MAX) throw badRequest(`field name "${name.slice(0, 40)}…" is longer than ${FIELD_NAME_MAX} characters`);
    if (++this.count > this.maxFields) throw new GslbError('API_PAYLOAD_TOO_LARGE', `too many fields: at most ${this.maxFields} per submission`);
    const prev = this.fields[name];
    if (prev === undefined) this.fields[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else this.fields[name] = [prev, value];
  }

  /** The fields as a plain object (stored as JSON). */
  result(): SubmissionFields {
    return { ...this.fields };
  }
}

/** Fields of an `application/x-www-form-urlencoded` body. */
export function urlEncodedFields(body: string, maxFields: number): SubmissionFields {
  const c = new FieldCollector(maxFields);
  for (const [name, value] of new URLSearchParams(body)) c.add(name, value);
  return c.result();
}

/** A JSON scalar as a field value: strings as sent, numbers and booleans as text, null as ''. */
function scalar(name: string, v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return '';
  throw badRequest(`field ${name}: must be a string, number, boolean, null or a list of them, not an object`);
}

/** Fields of a JSON body: an object whose values are scalars or lists of scalars (400 otherwise). */
export function jsonFields(body: unknown, maxFields: number): SubmissionFields {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('a JSON submission must be an object of fields');
  const c = new FieldCollector(maxFields);
  for (const [name, v] of Object.entries(body)) {
    if (Array.isArray(v)) for (const item of v) c.add(name, scalar(name, item));
    else c.add(name, scalar(name, v));
  }
  return c.result();
}

/** Every value of a field, as a list ([] when absent). */
export function valuesOf(fields: SubmissionFields, name: string): readonly string[] {
  const v = fields[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
