/** A submission's fields after parsing: each name to its value, or its values when the name repeats (checkboxes, multi-selects). */
export type SubmissionFields = Record<string, string | string[]>;

/** A file received with a submission, as stored (`path` is relative to the form files directory). */
export interface StoredFile {
  field: string;
  name: string;
  type: string;
  size: number;
  path: string;
}

/** A stored submission (node-local table `form_submissions`, docs/forms.md "Submissions"). */
export interface SubmissionRecord {
  id: number;
  tenantId: string;
  formId: string;
  createdAt: number;
  fields: SubmissionFields;
  files: StoredFile[];
  email: string | null;
  spam: boolean;
  spamReason: string | null;
  ip: string | null;
  userAgent: string | null;
  claimedAt: number | null;
  claimedBy: string | null;
}
