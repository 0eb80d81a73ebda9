import type { FormRow } from '../forms/rows.js';
import type { SubmissionStore } from '../submissions/store.js';
import type { SubmissionFields, SubmissionRecord } from '../submissions/types.js';

/** The most reminders one form queues per check (the rest follow at the next). */
export const REMINDERS_PER_CHECK = 200;

/**
 * Reminders of unclaimed submissions (docs/forms.md "Reminders"): for every form with
 * `reminder_after_minutes` > 0, each non-spam submission still unclaimed that long after it
 * arrived is marked reminded (once) and queues a `submission.reminder` delivery to the form's
 * `email` actions and to the webhook and n8n actions subscribed to it. A claim before the delay
 * means no reminder; a claim after it drops the queued reminder unsent. Returns how many
 * submissions were reminded.
 */
export function queueReminders(
  forms: readonly FormRow[],
  store: Pick<SubmissionStore, 'takeDueReminders' | 'queueEvent'>,
  pick: (form: FormRow, fields: SubmissionFields) => string[],
  now: number,
): number {
  let n = 0;
  forEachReminderForm(forms, now, (form, before) => {
    for (const s of store.takeDueReminders(form.id, before, now, REMINDERS_PER_CHECK)) {
      store.queueEvent(form.id, s.id, pick(form, s.fields), 'submission.reminder', now);
      n++;
    }
  });
  return n;
}

/**
 * The reminders due at `now`, per form, without marking them (the cluster publishes them first,
 * docs/forms.md "In a cluster"): each submission with the actions its reminder goes to.
 */
export function dueReminderJobs(
  forms: readonly FormRow[],
  due: (formId: string, before: number, limit: number) => SubmissionRecord[],
  pick: (form: FormRow, fields: SubmissionFields) => string[],
  now: number,
): { form: FormRow; jobs: { submissionId: number; actionIds: string[] }[] }[] {
  const out: { form: FormRow; jobs: { submissionId: number; actionIds: string[] }[] }[] = [];
  forEachReminderForm(forms, now, (form, before) => {
    const jobs = due(form.id, before, REMINDERS_PER_CHECK).map((s) => ({ submissionId: s.id, actionIds: pick(form, s.fields) }));
    if (jobs.length > 0) out.push({ form, jobs });
  });
  return out;
}

/** Calls `fn` for each form that reminds, with the time before which its unclaimed submissions are due. */
function forEachReminderForm(forms: readonly FormRow[], now: number, fn: (form: FormRow, before: number) => void): void {
  for (const form of forms) {
    const minutes = form.reminder_after_minutes ?? 0;
    if (minutes > 0) fn(form, now - minutes * 60_000);
  }
}
