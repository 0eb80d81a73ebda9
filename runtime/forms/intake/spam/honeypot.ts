import type { SubmissionFields } from '../../submissions/types.js';
import { valuesOf } from '../fields.js';

/** Spam when the hidden honeypot field (`honeypot_field`) has any non-blank value: people never see it, bots fill every field. */
export function honeypotReason(fields: SubmissionFields, field: string): string | null {
  return valuesOf(fields, field).some((v) => v.trim() !== '') ? 'honeypot field filled' : null;
}
