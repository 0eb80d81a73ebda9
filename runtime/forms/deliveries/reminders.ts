import type { FormRow } from '../forms/rows.js';
import type { SubmissionStore } from '../submissions/store.js';
import type { SubmissionFields } from '../submissions/types.js';

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
  for (const form of forms) {
    const minutes = form.reminder_after_minutes ?? 0;
    if (minutes <= 0) continue;
    for (const s of store.takeDueReminders(form.id, now - minutes * 60_000, now, REMINDERS_PER_CHECK)) {
      store.queueEvent(form.id, s.id, pick(form, s.fields), 'submission.reminder', now);
      n++;
    }
  }
  return n;
}
