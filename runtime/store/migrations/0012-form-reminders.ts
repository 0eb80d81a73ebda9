/** When an unclaimed submission sent its reminder (docs/forms.md "Reminders"): one per submission. */
export const sql = `
ALTER TABLE form_submissions ADD COLUMN reminded_at INTEGER;
CREATE INDEX form_submissions_unclaimed ON form_submissions (form_id, created_at) WHERE claimed_at IS NULL AND reminded_at IS NULL AND spam = 0;
`;
