import type { SubmissionRecord } from './types.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A submission as the API shows it (`api-forms` `Submission`): snake_case, ISO times, file paths never shown. */
export function submissionView(s: SubmissionRecord) {
  return {
    id: s.id,
    form_id: s.formId,
    created_at: new Date(s.createdAt).toISOString(),
    data: s.fields,
    files: s.files.map((f, index) => ({ index, field: f.field, name: f.name, type: f.type, size: f.size })),
    spam: s.spam,
    spam_reason: s.spamReason,
    claimed: s.claimedAt !== null,
    claimed_at: iso(s.claimedAt),
    claimed_by: s.claimedBy,
    visitor: s.ip === null && s.userAgent === null ? null : { ip: s.ip, user_agent: s.userAgent },
  };
}

/** `Content-Disposition` of a stored file: always an attachment, the visitor's name quoted safely. */
export function attachmentHeader(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
