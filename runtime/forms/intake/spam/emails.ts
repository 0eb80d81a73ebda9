import type { SubmissionFields } from '../../submissions/types.js';

const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** True for a field whose name says it holds an address: `email`, `_replyto`, `replyto`, or any name containing `email`. */
function isEmailName(name: string): boolean {
  const n = name.toLowerCase();
  return n.includes('email') || n === '_replyto' || n === 'replyto';
}

/**
 * The e-mail addresses a submission carries: values of the schema's `email` fields and of fields
 * named like an address field, that look like an address (one `@`, a dot in the domain, no
 * spaces, at most 254 characters); trimmed, lower-cased, unique, in order. Pure.
 */
export function emailsOf(fields: SubmissionFields, emailFieldNames: readonly string[]): string[] {
  const out: string[] = [];
  for (const [name, v] of Object.entries(fields)) {
    if (!emailFieldNames.includes(name) && !isEmailName(name)) continue;
    for (const raw of Array.isArray(v) ? v : [v]) {
      const e = raw.trim().toLowerCase();
      if (e.length <= 254 && ADDRESS.test(e) && !out.includes(e)) out.push(e);
    }
  }
  return out;
}

/** The first address of a submission, or null. */
export function primaryEmail(fields: SubmissionFields, emailFieldNames: readonly string[]): string | null {
  return emailsOf(fields, emailFieldNames)[0] ?? null;
}
